/**
 * The command line's entry: parses, runs one command, renders any error once, and returns the
 * exit code. It never calls `process.exit` on the normal path (that truncates piped output):
 * bin/govctl.js sets `process.exitCode` and the process ends when its streams are drained.
 */
import { writeSync } from 'node:fs';
import { CommanderError, type Command } from 'commander';
import { isWriteCommand, windsDown, commandPath } from './command-kit.js';
import { InterruptedError, PipeClosedError, UsageError, formatError, describeError, oneLine } from './errors.js';
import { EXIT, exitCodeFor, type ExitCode } from './exit-codes.js';
import { createFactory, type Factory } from './factory.js';
import { createProcessIO, type IO } from './io.js';
import { createProgram, type ProgramState } from './program.js';
import type { OnErrorMode } from './settings.js';

/** What a run may be given instead of the process's own (tests run the CLI in-process this way). */
export interface MainOptions {
  io?: IO;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  clock?: () => Date;
  /** install SIGINT and crash handlers (default: true when running on the process's own streams) */
  processHandlers?: boolean;
}

/** How long a command that winds down by itself gets after Ctrl-C before the run ends anyway. */
const WIND_DOWN_MS = 20_000;

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

  const handlers = options.processHandlers ?? options.io === undefined;
  const interrupted = new Promise<'interrupted'>((resolve) => {
    controller.signal.addEventListener('abort', () => {
      const grace = windsDown(state.actionCommand) ? WIND_DOWN_MS : 0;
      setTimeout(() => resolve('interrupted'), grace).unref();
    });
  });
  const onSigint = () => {
    // The second Ctrl-C does not wait for anything.
    if (controller.signal.aborted) process.exit(EXIT.INTERRUPTED);
    controller.abort(new InterruptedError());
  };
  const onCrash = (error: unknown) => crash(error, json());
  if (handlers) {
    process.on('SIGINT', onSigint);
    process.on('uncaughtException', onCrash);
    process.on('unhandledRejection', onCrash);
  }

  let code: number = EXIT.OK;
  try {
    program = createProgram(factory, state);
    const outcome = await Promise.race([program.parseAsync([...argv], { from: 'user' }), interrupted]);
    if (outcome === 'interrupted') throw new InterruptedError();
  } catch (error) {
    code = await handleError(error, { factory, state, json: json(), verbose: program?.opts().verbose === true, aborted: controller.signal.aborted });
  } finally {
    await factory.close();
    try {
      await io.flush();
    } catch (error) {
      if (!(error instanceof PipeClosedError)) code = code === EXIT.OK ? EXIT.INTERNAL : code;
    }
    if (handlers) {
      process.off('SIGINT', onSigint);
      process.off('uncaughtException', onCrash);
      process.off('unhandledRejection', onCrash);
    }
  }
  return code;
}

interface ErrorContext {
  factory: Factory;
  state: ProgramState;
  json: boolean;
  verbose: boolean;
  aborted: boolean;
}

/** Renders the error that ended the run (once) and returns the exit code. */
async function handleError(error: unknown, context: ErrorContext): Promise<number> {
  const { factory, state } = context;
  if (error instanceof PipeClosedError) return EXIT.OK;
  if (error instanceof CommanderError) {
    switch (error.code) {
      case 'commander.helpDisplayed':
      case 'commander.version':
        return EXIT.OK;
      case 'commander.help':
        // A group without its subcommand: commander printed the help on stderr.
        return EXIT.USAGE;
      default: {
        const where = state.errorCommand ?? state.actionCommand;
        const hint = where ? `see \`${commandPath(where)} --help\`` : 'see `govctl --help`';
        error = new UsageError(error.message.replace(/^error: /, ''), { hint });
      }
    }
  }
  if (context.aborted && !(error instanceof InterruptedError)) error = new InterruptedError();

  const code: ExitCode = exitCodeFor(error);
  if (code !== EXIT.USAGE && code !== EXIT.INTERRUPTED && isWriteCommand(state.actionCommand)) {
    const mode = await onErrorMode(factory);
    if (mode === 'silent') return EXIT.OK;
    if (mode === 'warn') {
      await writeErr(factory, `govctl: warning: ${oneLine(describeError(error).message)} (not failing: --on-error warn)\n`);
      return EXIT.OK;
    }
  }
  await writeErr(factory, `${formatError(error, context.json)}\n`);
  if (context.verbose && code === EXIT.INTERNAL && error instanceof Error && error.stack) await writeErr(factory, `${error.stack}\n`);
  return code;
}

/** `--on-error` from the settings, or from the flag and environment when the settings cannot load. */
async function onErrorMode(factory: Factory): Promise<OnErrorMode> {
  try {
    return (await factory.settings()).onError;
  } catch {
    const raw = factory.globals.onError ?? factory.env.SERVICE_ON_ERROR;
    return raw === 'warn' || raw === 'silent' ? raw : 'raise';
  }
}

async function writeErr(factory: Factory, text: string): Promise<void> {
  await factory.io.stderr.write(text).catch(() => undefined);
}

/** An exception nothing awaited: report it as an internal error (70, never 1) and stop. */
function crash(error: unknown, json: boolean): void {
  if (error instanceof PipeClosedError) {
    process.exit(EXIT.OK);
  }
  try {
    writeSync(2, `${formatError(error, json)}\n`);
  } catch {
    // stderr is gone too; the exit code still says it.
  }
  process.exit(EXIT.INTERNAL);
}
