/**
 * The command line's entry: parses with commander and runs one command as a session (session.ts),
 * which renders any error once and returns the exit code. bin/govctl.js sets `process.exitCode`
 * and the process ends when its streams are drained.
 */
import { CommanderError, type Command } from 'commander';
import { isWriteCommand, windsDown, commandPath } from './command-kit.js';
import { UsageError } from './errors.js';
import { EXIT } from './exit-codes.js';
import { createFactory } from './factory.js';
import { createProcessIO, type IO } from './io.js';
import { createProgram, type ProgramState } from './program.js';
import { runSession } from './session.js';

/** What a run may be given instead of the process's own (tests run the CLI in-process this way). */
export interface MainOptions {
  io?: IO;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  clock?: () => Date;
  /** the client's wait before a retry (tests record it instead of waiting) */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** install SIGINT and crash handlers (default: true when running on the process's own streams) */
  processHandlers?: boolean;
}

/**
 * Runs `govctl` with the given arguments (without `node` and the script) and resolves to the exit
 * code; never rejects.
 *
 * @example process.exitCode = await main(process.argv.slice(2));
 */
export async function main(argv: readonly string[], options: MainOptions = {}): Promise<number> {
  const env = options.env ?? process.env;
  const state: ProgramState = {};
  let program: Command | undefined;
  const io = options.io ?? createProcessIO(() => program?.opts().color === false || (program === undefined && argv.includes('--no-color')), env);
  const controller = new AbortController();
  const factory = createFactory({
    io,
    env,
    cwd: options.cwd ?? process.cwd(),
    globals: () => program?.opts() ?? {},
    signal: controller.signal,
    clock: options.clock,
    sleep: options.sleep,
  });
  const json = () => program?.opts().json === true || (program?.opts().json === undefined && argv.includes('--json'));

  return runSession({
    io,
    factory,
    controller,
    processHandlers: options.processHandlers ?? options.io === undefined,
    execute: async () => {
      program = await createProgram(factory, state, argv);
      return program.parseAsync([...argv], { from: 'user' });
    },
    translate: (error) => translateCommanderError(error, state),
    json,
    verbose: () => program?.opts().verbose === true,
    isWrite: () => isWriteCommand(state.actionCommand),
    windsDown: () => windsDown(state.actionCommand),
  });
}

/**
 * Commander's message in the CLI's own form: `--fail-on must be one of soft, hard, never, got
 * "nevr"` rather than `option '--fail-on <level>' argument 'nevr' is invalid. Allowed choices are
 * soft, hard, never.`; the flag named once, the value once, and no full stop before the hint.
 */
export function usageMessage(text: string): { message: string; field?: string } {
  const message = text.replace(/^error: /, '');
  const invalid = /^option '(-[^\s',]+)(?:, (--[^\s']+))?(?: [<[][^>\]]*[>\]])?' argument '([\s\S]*)' is invalid\.\s*([\s\S]*)$/.exec(message);
  if (invalid) {
    const flag = invalid[2] ?? invalid[1];
    const value = invalid[3];
    const why = invalid[4].trim().replace(/\.$/, '');
    const choices = /^Allowed choices are ([\s\S]*)$/.exec(why);
    if (choices) return { message: `${flag} must be one of ${choices[1]}, got "${value}"`, field: flag };
    // Our parsers (command-kit.ts) start their reason with the flag: `--limit must be a whole number`.
    if (why.startsWith(`${flag} `)) return { message: `${why}, got "${value}"`, field: flag };
    return { message: `${flag} "${value}": ${why || 'invalid value'}`, field: flag };
  }
  const argument = /^command-argument value '([\s\S]*)' is invalid for argument '([^']+)'\.\s*([\s\S]*)$/.exec(message);
  if (argument) {
    const why = argument[3].trim().replace(/\.$/, '');
    const choices = /^Allowed choices are ([\s\S]*)$/.exec(why);
    return { message: choices ? `<${argument[2]}> must be one of ${choices[1]}, got "${argument[1]}"` : `<${argument[2]}> "${argument[1]}": ${why}` };
  }
  // Every other commander message ends in a full stop that the hint would follow.
  return { message: message.trim().replace(/\.$/, '') };
}

/** Commander's errors: help shown (an exit code), or a usage error naming the command's help. */
function translateCommanderError(error: unknown, state: ProgramState): number | { error: unknown } | undefined {
  if (!(error instanceof CommanderError)) return undefined;
  switch (error.code) {
    case 'commander.helpDisplayed':
    case 'commander.version':
      return EXIT.OK;
    case 'commander.help':
      // `govctl <group> help <command>` (commander's exit code 0); 1 when commander printed help for
      // a mistake (a bare group prints its help itself and exits 0: subcommands.ts).
      return error.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    default: {
      const where = state.errorCommand ?? state.actionCommand;
      const hint = where ? `see \`${commandPath(where)} --help\`` : 'see `govctl --help`';
      const { message, field } = usageMessage(error.message);
      return { error: new UsageError(message, { hint, ...(field !== undefined && { field }) }) };
    }
  }
}
