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
      return { error: new UsageError(error.message.replace(/^error: /, ''), { hint }) };
    }
  }
}
