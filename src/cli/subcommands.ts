/**
 * What a command group does with what is not one of its subcommands (docs/cli.md "Groups, typos
 * and did-you-mean"), decided here for every group of the tree:
 * - a bare group (`govctl`, `govctl evidence`, `govctl attest`) prints its help on stdout and exits
 *   0, as gh does: asking a group what it holds is not an error;
 * - an unknown subcommand is a usage error (64) that names the closest subcommand when one is
 *   within {@link SUGGEST_DISTANCE} edits;
 * - `attest` takes a free tool name where a subcommand may stand (`attest <tool>` is its default
 *   subcommand `push`): a word within {@link SUGGEST_DISTANCE} edits of a subcommand (`batchh`)
 *   is taken for a mistyped subcommand unless a `--` was given (`govctl attest -- batchh …`) or
 *   `push` was named (`govctl attest push batchh …`); any other word is a tool name.
 */
import { CommanderError, type Command } from 'commander';
import { commandPath } from './command-kit.js';
import { UsageError } from './errors.js';

/** Edits (insertions, deletions, substitutions, swaps of neighbours) within which a word is taken for a subcommand. */
export const SUGGEST_DISTANCE = 2;

/** The optimal-string-alignment distance: Levenshtein with a swap of two neighbours as one edit. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The visible subcommand names of a group (aliases included). */
function subcommandNames(group: Command): string[] {
  return group.commands.filter((sub) => !(sub as Command & { _hidden?: boolean })._hidden).flatMap((sub) => [sub.name(), ...sub.aliases()]);
}

/** The subcommand closest to `word` within {@link SUGGEST_DISTANCE} edits (the first listed on a tie), if any. */
export function closestSubcommand(group: Command, word: string): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of subcommandNames(group)) {
    const distance = editDistance(word.toLowerCase(), name.toLowerCase());
    if (distance <= SUGGEST_DISTANCE && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** The usage error for a word that is not a subcommand of `group`. */
export function unknownSubcommand(group: Command, word: string, extraHint?: string): UsageError {
  const path = commandPath(group);
  const suggestion = closestSubcommand(group, word);
  const hint = suggestion ? `did you mean \`${path} ${suggestion}\`?${extraHint ? ` ${extraHint}` : ''}` : `see \`${path} --help\` for its commands`;
  return new UsageError(`unknown command '${word}' for '${path}'`, { hint });
}

type Internals = Command & { _actionHandler?: unknown; _defaultCommandName?: string | null; _addImplicitHelpCommand?: boolean };

/**
 * Gives a group its behaviour for a bare call and for unknown words (see the file's comment). A
 * command with an action of its own (`help [command...]`) or without subcommands is left alone.
 */
export function guardGroup(group: Command): void {
  const internals = group as Internals;
  if (group.commands.length === 0 || internals._actionHandler) return;
  const defaultName = internals._defaultCommandName;
  if (defaultName) {
    // Everything that is not a subcommand goes to the default one: look at its first word first.
    group.hook('preSubcommand', (self, sub) => {
      if (sub.name() !== defaultName || self.args[0] === defaultName) return;
      if (self.args.length === 0) {
        self.outputHelp();
        throw helpShown();
      }
      const word = self.args[0];
      let root: Command = self;
      while (root.parent) root = root.parent;
      const dashDash = (root as Command & { rawArgs?: string[] }).rawArgs?.includes('--') === true;
      if (!word.startsWith('-') && !dashDash && closestSubcommand(group, word) !== undefined) {
        throw unknownSubcommand(group, word, `To attest a tool named '${word}', write \`${commandPath(group)} ${defaultName} ${word} …\`.`);
      }
    });
    return;
  }
  // An action turns commander's implicit `help [command]` subcommand off; keep it (`govctl evidence help list`)
  // unless the group decided otherwise (the root has its own `help` group).
  if ((group as Internals)._addImplicitHelpCommand === undefined && !group.commands.some((sub) => sub.name() === 'help')) group.helpCommand(true);
  group.allowExcessArguments(true).action((_flags: unknown, self: Command) => {
    if (self.args.length === 0) {
      self.outputHelp();
      return;
    }
    throw unknownSubcommand(group, self.args[0]);
  });
}

/** Ends the run after help was printed, as commander's own `--help` does (exit 0, main.ts). */
function helpShown(): CommanderError {
  return new CommanderError(0, 'commander.helpDisplayed', '(outputHelp)');
}
