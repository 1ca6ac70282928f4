/**
 * The answers of `govctl __complete <words…>`, the hidden command that every completion script
 * asks (as cobra-based tools do): the candidates for the last word, read from the commander
 * program itself (commands, subcommands, flags, option choices, and the record-type catalogue's
 * enums through `completeWith`), plus a directive telling the shell what else to do (complete
 * file names, directories, or nothing else). Because the scripts ask the program, they cannot
 * drift from the commands. Pure: no shell syntax here (scripts.ts), no I/O.
 */
import type { Argument, Command, Option } from 'commander';
import { completionValues } from '../command-kit.js';

/**
 * What the shell does besides offering the candidates; the numbers are the protocol between
 * `__complete` and the scripts (the last line of the answer is `:<directive>`).
 */
export const DIRECTIVE = {
  /** offer the candidates and nothing else */
  CANDIDATES: 0,
  /** complete file names (the candidates, if any, are offered as well) */
  FILES: 1,
  /** complete directory names */
  DIRECTORIES: 2,
} as const;
export type Directive = (typeof DIRECTIVE)[keyof typeof DIRECTIVE];

/** One candidate: the word, and a description for shells that show one (zsh, fish, PowerShell). */
export interface Candidate {
  value: string;
  description: string;
}

export interface Completion {
  candidates: Candidate[];
  directive: Directive;
}

type Internals = Command & { _hidden?: boolean; _defaultCommandName?: string | null };

const visible = (command: Command) => command.commands.filter((sub) => !(sub as Internals)._hidden);
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

/** Whether an option's value or an argument is a file or a directory, from its name and placeholder. */
function valueKind(text: string): 'file' | 'directory' | 'text' {
  const lower = text.toLowerCase();
  if (/dir\b|<dir>/.test(lower)) return 'directory';
  if (/file|--db\b|<path>/.test(lower)) return 'file';
  return 'text';
}

/** The options usable at a command: its own, then every ancestor's (the root's are global). */
function optionsAt(command: Command): Option[] {
  const seen = new Set<string>();
  const out: Option[] = [];
  for (let at: Command | null = command; at; at = at.parent) {
    for (const option of at.options) {
      const key = option.long ?? option.short ?? option.flags;
      if (option.hidden || seen.has(key)) continue;
      seen.add(key);
      out.push(option);
    }
  }
  return out;
}

function findOption(command: Command, name: string): Option | undefined {
  for (let at: Command | null = command; at; at = at.parent) {
    const found = at.options.find((option) => option.long === name || option.short === name || (option.negate && option.long === name));
    if (found) return found;
  }
  return undefined;
}

const takesValue = (option: Option) => option.required || option.optional;

/** The candidates and directive for an option's value. */
function valueCompletion(option: Option, prefix: string, current: string): Completion {
  const values = completionValues(option);
  if (values.length > 0)
    return {
      candidates: values.filter((value) => value.startsWith(current)).map((value) => ({ value: prefix + value, description: '' })),
      directive: DIRECTIVE.CANDIDATES,
    };
  const kind = valueKind(`${option.long ?? ''} ${option.flags}`);
  return { candidates: [], directive: kind === 'file' ? DIRECTIVE.FILES : kind === 'directory' ? DIRECTIVE.DIRECTORIES : DIRECTIVE.CANDIDATES };
}

/** The candidates and directive for the `index`-th argument of a command. */
function argumentCompletion(command: Command, index: number, current: string): Completion {
  const candidates: Candidate[] = [];
  if (index === 0) {
    for (const sub of visible(command))
      if (sub.name().startsWith(current)) candidates.push({ value: sub.name(), description: oneLine(sub.summary() || sub.description()) });
  }
  const args = command.registeredArguments;
  const argument: Argument | undefined = args[index] ?? (args.at(-1)?.variadic ? args.at(-1) : undefined);
  if (!argument) return { candidates, directive: DIRECTIVE.CANDIDATES };
  for (const choice of argument.argChoices ?? []) if (choice.startsWith(current)) candidates.push({ value: choice, description: '' });
  const kind = valueKind(`<${argument.name()}>`);
  return { candidates, directive: kind === 'file' ? DIRECTIVE.FILES : kind === 'directory' ? DIRECTIVE.DIRECTORIES : DIRECTIVE.CANDIDATES };
}

/**
 * Completes the last of `words` (the words after `govctl`, the last one being typed, possibly
 * empty) against the program.
 *
 * @example complete(program, ['evidence', 'add', 'ai_risk_assessment', '--risk-level', '']) // high, limited, minimal, unacceptable
 */
export function complete(root: Command, words: readonly string[]): Completion {
  const current = words.at(-1) ?? '';
  let command: Command = root;
  let argIndex = 0;
  let pending: Option | undefined;
  let operandsOnly = false;
  for (const word of words.slice(0, -1)) {
    if (pending) {
      pending = undefined;
      continue;
    }
    if (!operandsOnly && word === '--') {
      operandsOnly = true;
      continue;
    }
    if (!operandsOnly && word.startsWith('-') && word !== '-') {
      if (word.includes('=')) continue;
      const option = findOption(command, word);
      if (option && option.required) pending = option;
      continue;
    }
    const sub =
      argIndex === 0 && !operandsOnly ? visible(command).find((candidate) => candidate.name() === word || candidate.aliases().includes(word)) : undefined;
    if (sub) {
      command = sub;
      continue;
    }
    // A word that is not a subcommand goes to the default subcommand (`attest <tool>` is `attest push <tool>`).
    const defaultName = (command as Internals)._defaultCommandName;
    const fallback = argIndex === 0 && defaultName ? command.commands.find((candidate) => candidate.name() === defaultName) : undefined;
    if (fallback) command = fallback;
    argIndex++;
  }

  if (pending) return valueCompletion(pending, '', current);
  if (!operandsOnly && current.startsWith('--') && current.includes('=')) {
    const name = current.slice(0, current.indexOf('='));
    const option = findOption(command, name);
    return option && takesValue(option)
      ? valueCompletion(option, `${name}=`, current.slice(name.length + 1))
      : { candidates: [], directive: DIRECTIVE.CANDIDATES };
  }
  if (!operandsOnly && current.startsWith('-')) {
    const candidates: Candidate[] = [];
    for (const option of optionsAt(command)) {
      for (const name of [option.long, option.short])
        if (name && name.startsWith(current)) candidates.push({ value: name, description: oneLine(option.description) });
    }
    for (const name of ['--help', '-h'])
      if (name.startsWith(current) && !candidates.some((candidate) => candidate.value === name)) candidates.push({ value: name, description: 'show help' });
    return { candidates, directive: DIRECTIVE.CANDIDATES };
  }
  return argumentCompletion(command, argIndex, current);
}

/** The answer as `__complete` prints it: one `value<TAB>description` line per candidate, then `:<directive>`. */
export function formatCompletion(completion: Completion): string {
  // A candidate is one line: a value or description holding a line break would forge another.
  const clean = (text: string) => text.replace(/[\t\r\n]+/g, ' ');
  return (
    [
      ...completion.candidates.map(({ value, description }) => (description ? `${clean(value)}\t${clean(description)}` : clean(value))),
      `:${completion.directive}`,
    ].join('\n') + '\n'
  );
}
