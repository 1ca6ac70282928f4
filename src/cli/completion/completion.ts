/**
 * `govctl completion bash|zsh|fish|powershell` prints a completion script, and the hidden
 * `govctl __complete -- <words…>` answers it (complete.ts): the scripts ask the program for every
 * completion, so they always match this version's commands, flags and values.
 */
import { Argument, Command } from 'commander';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { INSTALL, SHELLS, type Shell } from './shells.js';

export interface CompletionOptions {
  shell: Shell;
  /** the version named in the script's header */
  version: string;
}

/** The root of the command a run is in. */
function rootOf(command: Command): Command {
  let root = command;
  while (root.parent) root = root.parent;
  return root;
}

export function createCompletionCommand(factory: Factory): Command {
  const command = new Command('completion')
    .description('print a shell completion script (bash, zsh, fish or powershell)')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action(async (shell: Shell, _flags: unknown, self: Command) => run({ shell, version: rootOf(self).version() ?? '' }, factory));
  // A blank line between the shells: the help's wrapping refills a run of equally indented lines as one paragraph.
  command.addHelpText(
    'after',
    `\nThe script asks \`govctl __complete\` for each completion: commands, flags, flag values (the record types' enums among them) and file names.\n\nInstall:\n${SHELLS.map((shell) => `  ${shell}: ${INSTALL[shell].join(' ')}`).join('\n\n')}\n`,
  );
  return addExamples(command, [
    'govctl completion bash > ~/.local/share/bash-completion/completions/govctl',
    'source <(govctl completion zsh)',
    'govctl completion fish > ~/.config/fish/completions/govctl.fish',
    'govctl completion powershell | Out-String | Invoke-Expression',
  ]);
}

export async function run(options: CompletionOptions, deps: Factory): Promise<void> {
  const { completionScript } = await import('./scripts.js');
  await deps.io.stdout.write(completionScript(options.shell, options.version));
}

/**
 * The hidden `__complete` command. The scripts put the words after `--`, so that commander hands
 * them over untouched (a word being completed may be `--json` or `-h`).
 */
export function createCompleteCommand(factory: Factory): Command {
  return new Command('__complete')
    .description('answer a completion script: the candidates for the last of the words')
    .argument('[words...]', 'the words after govctl, the last one being completed')
    .helpOption(false)
    .allowUnknownOption()
    .action(async (words: string[], _flags: unknown, self: Command) => {
      const { complete, formatCompletion } = await import('./complete.js');
      await factory.io.stdout.write(formatCompletion(complete(rootOf(self), words.length > 0 ? words : [''])));
    });
}
