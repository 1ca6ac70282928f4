/**
 * The command tree as completion scripts need it, read from the commander program itself, so the
 * scripts always match the commands, subcommands (the record types of `evidence add` among them),
 * flags and flag values of this version. Pure: no shell syntax here.
 */
import type { Command, Option } from 'commander';

/** What a flag's value completes to. */
export type ValueKind = 'none' | 'choices' | 'file' | 'directory' | 'text';

/** One flag. */
export interface FlagSpec {
  /** `--format` */
  long?: string;
  /** `-v` */
  short?: string;
  description: string;
  /** what its value is: `none` for a switch */
  value: ValueKind;
  choices: string[];
}

/** One command. */
export interface CommandSpec {
  /** the words after `govctl`, e.g. `['gates', 'check']`; empty for the root */
  path: string[];
  name: string;
  description: string;
  subcommands: CommandSpec[];
  /** its own flags; the root's flags are global and apply to every command */
  flags: FlagSpec[];
  /** values its first argument may take (argument choices) */
  argumentChoices: string[];
}

/** Whether a flag's value is a file or a directory, from its name and value placeholder. */
function valueKind(option: Option): ValueKind {
  if (!option.required && !option.optional) return 'none';
  if (option.argChoices && option.argChoices.length > 0) return 'choices';
  const text = `${option.long ?? ''} ${option.flags}`.toLowerCase();
  if (/dir\b|<dir>/.test(text)) return 'directory';
  if (/file|--db\b|<path>/.test(text)) return 'file';
  return 'text';
}

function flagSpec(option: Option): FlagSpec {
  const spec: FlagSpec = { description: oneLine(option.description), value: valueKind(option), choices: [...(option.argChoices ?? [])] };
  if (option.long) spec.long = option.long;
  if (option.short) spec.short = option.short;
  return spec;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

const HELP_FLAG: FlagSpec = { long: '--help', short: '-h', description: 'show help', value: 'none', choices: [] };

/** The tree under `command` (hidden options and commands left out). */
export function commandTree(command: Command, path: string[] = []): CommandSpec {
  const flags = command.options.filter((option) => !option.hidden).map(flagSpec);
  flags.push(HELP_FLAG);
  const hidden = (sub: Command) => (sub as Command & { _hidden?: boolean })._hidden === true;
  const firstArgument = command.registeredArguments[0];
  return {
    path,
    name: command.name(),
    description: oneLine(command.summary() || command.description()),
    subcommands: command.commands.filter((sub) => !hidden(sub)).map((sub) => commandTree(sub, [...path, sub.name()])),
    flags,
    argumentChoices: [...(firstArgument?.argChoices ?? [])],
  };
}

/** Every command of the tree, the root first, parents before children. */
export function allCommands(root: CommandSpec): CommandSpec[] {
  const out: CommandSpec[] = [];
  const walk = (node: CommandSpec) => {
    out.push(node);
    node.subcommands.forEach(walk);
  };
  walk(root);
  return out;
}

/** Every flag spelling that takes a value, anywhere in the tree (for skipping values while parsing a command line). */
export function valueFlags(root: CommandSpec): string[] {
  const names = new Set<string>();
  for (const node of allCommands(root)) {
    for (const flag of node.flags) {
      if (flag.value === 'none') continue;
      if (flag.long) names.add(flag.long);
      if (flag.short) names.add(flag.short);
    }
  }
  return [...names].sort();
}

/** A word that is safe to put into any of the shells' scripts unquoted (flags, commands, choices). */
export function isPlainWord(word: string): boolean {
  return /^[A-Za-z0-9_.@%+=\/-]+$/.test(word);
}
