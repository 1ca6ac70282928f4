/**
 * How a run that failed ends (main.ts): the error rendered once on stderr (`--json`: one
 * object), the exit code from exit-codes.ts, and `--on-error` applied to writes. Commander's own errors are translated before
 * they reach here (main.ts).
 */
import { writeSync } from 'node:fs';
import { InterruptedError, PipeClosedError, describeError, formatError, oneLine } from './errors.js';
import { settingFromEnv } from './environment.js';
import { EXIT, exitCodeFor, type ExitCode } from './exit-codes.js';
import type { Factory } from './factory.js';
import type { OnErrorMode } from './settings.js';
import { messageLines } from './table-fit.js';
import { redactUrls, terminalText } from './terminal-text.js';

export interface FailureContext {
  factory: Factory;
  /** `--json` was asked for */
  json: boolean;
  /** `--verbose`: an internal error also prints its stack */
  verbose: boolean;
  /** Ctrl-C was pressed: whatever failed, the run was interrupted */
  aborted: boolean;
  /** the command writes (evidence add, attest, …): `--on-error` applies */
  isWrite: boolean;
}

/** Renders the error that ended the run (once) and returns the exit code. */
export async function reportFailure(error: unknown, context: FailureContext): Promise<number> {
  const { factory } = context;
  if (error instanceof PipeClosedError) return EXIT.OK;
  if (context.aborted && !(error instanceof InterruptedError)) error = new InterruptedError();

  const code: ExitCode = exitCodeFor(error);
  if (code !== EXIT.USAGE && code !== EXIT.INTERRUPTED && context.isWrite) {
    const mode = await onErrorMode(factory);
    if (mode === 'silent') return EXIT.OK;
    if (mode === 'warn') {
      const message = `${oneLine(redactUrls(describeError(error).message))} (not failing: --on-error warn)`;
      await warnOfWrite(factory, message, context.json).catch(() => undefined);
      return EXIT.OK;
    }
  }
  const line = formatError(error, context.json);
  await writeErr(factory, `${context.json ? line : messageLines(line, factory.io.stderr)}\n`);
  if (context.verbose && code === EXIT.INTERNAL && error instanceof Error && error.stack) {
    // Under --json, stderr stays JSON: the stack is a trace object.
    await writeErr(factory, context.json ? `${JSON.stringify({ trace: error.stack })}\n` : `${error.stack}\n`);
  }
  return code;
}

/**
 * The warning of a write that failed under `--on-error warn`: in a GitHub Actions job (and not
 * under `--json`, whose stderr is JSON only) a `::warning` workflow command, which the runner
 * shows as an annotation on the run; elsewhere the usual warning line.
 */
async function warnOfWrite(factory: Factory, message: string, json: boolean): Promise<void> {
  if (json || factory.env.GITHUB_ACTIONS !== 'true') return factory.warn(message);
  const { escapeData, escapeProperty } = await import('./gates/github.js');
  await factory.io.stderr.write(`::warning title=${escapeProperty('govctl: a write failed')}::${escapeData(terminalText(message))}\n`);
}

/** `--on-error` from the settings, or from the flag and environment when the settings cannot load. */
async function onErrorMode(factory: Factory): Promise<OnErrorMode> {
  try {
    return (await factory.settings()).onError;
  } catch {
    const raw = factory.globals.onError ?? settingFromEnv(factory.env, 'onError')?.value;
    return raw === 'warn' || raw === 'silent' ? raw : 'raise';
  }
}

async function writeErr(factory: Factory, text: string): Promise<void> {
  await factory.io.stderr.write(text).catch(() => undefined);
}

/** An exception nothing awaited: report it as an internal error (70, never 1) and stop. */
export function crash(error: unknown, json: boolean): void {
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
