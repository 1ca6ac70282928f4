/**
 * Small helpers every command file uses: help examples, option parsers that fail as usage errors
 * (64), and marks that main.ts reads (write commands honour `--on-error`; interruptible ones get
 * time to wind down after Ctrl-C).
 */
import { InvalidArgumentError, type Command, type Option } from 'commander';
import type { ValidationIssue } from '../core/index.js';

const WRITE = Symbol('govctl.write');
const WINDS_DOWN = Symbol('govctl.windsDown');
const COMPLETES_WITH = Symbol('govctl.completesWith');

type Marked = Command & { [WRITE]?: boolean; [WINDS_DOWN]?: boolean };

/**
 * Marks a command that writes evidence or attestations: with `--on-error warn|silent` its
 * failures become a warning (or nothing) and exit 0 (docs/cli.md "Exit codes").
 */
export function markWrite(command: Command): Command {
  (command as Marked)[WRITE] = true;
  return command;
}

export function isWriteCommand(command: Command | undefined): boolean {
  return command !== undefined && (command as Marked)[WRITE] === true;
}

/**
 * Marks a command that watches `factory.signal` and winds down by itself after Ctrl-C (finishes
 * requests in flight, flushes a batch, reports); main waits for it instead of ending at once.
 */
export function markWindsDown(command: Command): Command {
  (command as Marked)[WINDS_DOWN] = true;
  return command;
}

export function windsDown(command: Command | undefined): boolean {
  return command !== undefined && (command as Marked)[WINDS_DOWN] === true;
}

/**
 * The values shell completion offers for an option that takes one of a set but is validated
 * elsewhere (the record-type flags: the catalogue validates them, reporting every issue at once).
 * Options with commander `.choices()` need none: completion reads those.
 */
export function completeWith(option: Option, values: readonly string[]): Option {
  (option as Option & { [COMPLETES_WITH]?: readonly string[] })[COMPLETES_WITH] = values;
  return option;
}

/** The values {@link completeWith} gave an option, or its commander choices. */
export function completionValues(option: Option): readonly string[] {
  return (option as Option & { [COMPLETES_WITH]?: readonly string[] })[COMPLETES_WITH] ?? option.argChoices ?? [];
}

/**
 * The subcommands a run needs, of a group that loads its subcommands' modules lazily: the one the
 * first word names, or all of them (the group's help, an option first, an unknown word and its
 * suggestion, or no words: the whole tree).
 */
export function commandsFor<T extends { readonly name: string }>(subcommands: readonly T[], words: readonly string[] | undefined): readonly T[] {
  const named = words?.[0] === undefined ? undefined : subcommands.find((subcommand) => subcommand.name === words[0]);
  return named ? [named] : subcommands;
}

/** Appends an "Examples:" section to a command's help. */
export function addExamples(command: Command, examples: readonly string[]): Command {
  return command.addHelpText('after', `\nExamples:\n${examples.map((example) => `  $ ${example}`).join('\n')}\n`);
}

/** `govctl evidence list`: the command's full name. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let current: Command | null = command; current; current = current.parent) names.unshift(current.name());
  return names.join(' ');
}

/**
 * Whether a validation issue says a value is outside its flag's own domain (type, format, enum,
 * range: what `--help` shows), i.e. malformed as typed (64, docs/exit-codes.md "Malformed values")
 * when the value came from the command line.
 */
export function outsideFlagDomain(found: ValidationIssue): boolean {
  return FLAG_DOMAIN_CODES.has(found.code);
}

const FLAG_DOMAIN_CODES: ReadonlySet<ValidationIssue['code']> = new Set(['type', 'format', 'enum', 'range']);

/**
 * An option parser for a whole number within bounds; anything else is a usage error (64).
 * @example new Option('--limit <n>').argParser(wholeNumber('--limit', { min: 1, max: 200 }))
 */
export function wholeNumber(flag: string, bounds: { min?: number; max?: number } = {}): (value: string) => number {
  return (value: string) => {
    if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError(`${flag} must be a whole number`);
    const n = Number(value);
    if (bounds.min !== undefined && n < bounds.min) throw new InvalidArgumentError(`${flag} must be at least ${bounds.min}`);
    if (bounds.max !== undefined && n > bounds.max) throw new InvalidArgumentError(`${flag} must be at most ${bounds.max}`);
    return n;
  };
}

/** Collects a repeatable option into an array. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
