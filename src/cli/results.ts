/**
 * Per-record results of the commands that write many records (`evidence import`, `attest batch`):
 * one line per record on stdout, in input order, a tally, and the exit code of the run. A closed
 * stdout stops the lines, not the writes.
 *
 * Line formats (docs/cli.md): piped, tab-separated
 *   `ok <index> <id> <detail>` and `error <index> <code> <field or -> <message>`;
 * with `--json`, one JSON object per line (NDJSON): `{"index", "status": "ok", …}` or
 * `{"index", "status": "error", "error", "field"?, "message"}`.
 */
import { NetworkError } from '../client/errors.js';
import { stringifyJson } from '../core/canonical-json.js';
import { InterruptedError, PartialFailureError, describeError, oneLine } from './errors.js';
import { EXIT, exitCodeFor, worseExitCode, type ExitCode } from './exit-codes.js';
import type { Factory } from './factory.js';
import { printBeforeVerdict, type OutputStream } from './io.js';
import { plural } from './render.js';
import { terminalText } from './terminal-text.js';

/** One record's outcome. */
export type Outcome =
  | {
      index: number;
      status: 'ok';
      /** the piped line's fields after `ok` and the index */
      tsv: string[];
      /** the `--json` line's fields besides `index` and `status` */
      json: Record<string, unknown>;
    }
  | {
      index: number;
      status: 'error';
      /** the error code: the service's, the client's, or `invalid_json` / `validation_error` */
      error: string;
      field?: string;
      message: string;
      exitCode: ExitCode;
      /** the failure concerns the whole run (access, configuration, unreachable service) */
      stopsRun: boolean;
      /** the error, rethrown when it stops the run */
      cause?: unknown;
    };

/** An invalid record found before sending (65). */
export function invalidRecord(index: number, error: 'invalid_json' | 'validation_error', message: string, field?: string): Outcome {
  const outcome: Outcome = { index, status: 'error', error, message, exitCode: EXIT.DATA_ERROR, stopsRun: false };
  if (field !== undefined) outcome.field = field;
  return outcome;
}

/**
 * A failed request as an outcome. Access (401/403), configuration (404 workspace) and an
 * unreachable service stop the run, since every further record would fail the same way; a 5xx may
 * be this record's own and a 429 passes, so those go on.
 */
export function failedRequest(index: number, error: unknown): Outcome {
  const described = describeError(error);
  const exitCode = exitCodeFor(error);
  const outcome: Outcome = {
    index,
    status: 'error',
    error: described.code,
    message: oneLine(described.message),
    exitCode,
    stopsRun: exitCode === EXIT.NO_PERMISSION || exitCode === EXIT.CONFIG || exitCode === EXIT.INTERNAL || error instanceof NetworkError,
    cause: error,
  };
  if (described.field !== undefined) outcome.field = described.field;
  return outcome;
}

const clean = (text: string) => terminalText(text.replace(/[\t\r\n]+/g, ' '));

/** The line of one outcome. */
export function formatOutcome(outcome: Outcome, json: boolean, out: OutputStream): string {
  if (json) {
    if (outcome.status === 'ok') return stringifyJson({ index: outcome.index, status: 'ok', ...outcome.json }) + '\n';
    const shown: Record<string, unknown> = { index: outcome.index, status: 'error', error: outcome.error };
    if (outcome.field !== undefined) shown.field = outcome.field;
    shown.message = outcome.message;
    return stringifyJson(shown) + '\n';
  }
  const coloured = out.colorEnabled; // FORCE_COLOR colours piped lines too (cli.md "Output")
  if (outcome.status === 'ok') {
    return `${coloured ? out.color.green('ok') : 'ok'}\t${outcome.index}\t${outcome.tsv.map(clean).join('\t')}\n`;
  }
  return `${coloured ? out.color.red('error') : 'error'}\t${outcome.index}\t${clean(outcome.error)}\t${clean(outcome.field ?? '-')}\t${clean(outcome.message)}\n`;
}

/** Counts outcomes, writes their lines, and decides how the run ends. */
export class Tally {
  done = 0;
  failed = 0;
  /** records the service had already stored (answered from their idempotency keys) */
  replayed = 0;
  private invalid = 0;
  private worst: ExitCode = EXIT.OK;
  /** the outcome that stopped the run, if one did */
  stopper: Outcome | undefined;
  /** stdout's reader went away: the remaining lines are not written */
  #outputClosed = false;

  constructor(
    private readonly deps: Factory,
    private readonly options: { json: boolean; failFast: boolean },
  ) {}

  /** whether no more records should be started */
  get stopped(): boolean {
    return this.stopper !== undefined || this.deps.signal.aborted;
  }

  async add(outcome: Outcome): Promise<void> {
    this.done++;
    if (outcome.status === 'ok' && outcome.json.replayed === true) this.replayed++;
    if (outcome.status === 'error') {
      this.failed++;
      if (outcome.exitCode === EXIT.DATA_ERROR) this.invalid++;
      else this.worst = worseExitCode(this.worst, outcome.exitCode);
      if ((outcome.stopsRun || this.options.failFast) && !this.stopper) this.stopper = outcome;
    }
    // A reader that stops reading (`| head -1`) ends the lines, not the run: every record is still
    // sent, and the exit code says how they fared, rather than a 0 for a run stopped half-way.
    if (this.#outputClosed) return;
    const { closed } = await printBeforeVerdict(() => this.deps.io.stdout.write(formatOutcome(outcome, this.options.json, this.deps.io.stdout)));
    this.#outputClosed = closed;
  }

  /**
   * Ends the run: a summary on stderr when all went well; otherwise the error to throw. Exit code:
   * Ctrl-C 130; a run-stopping error its own code; else 65 when any record was invalid; else the
   * worst other code.
   */
  async finish(what: { noun: string; verb: string; seconds: number; dryRun: boolean; resumeHint?: string }): Promise<void> {
    const { done, failed } = this;
    if (this.deps.signal.aborted) {
      // The hint first: the last lines say what happened (docs/cli.md "Exit codes", 130).
      if (what.resumeHint) await this.deps.note(what.resumeHint);
      await this.deps.note(`interrupted after ${plural(done, what.noun)} (${failed} failed)`);
      throw new InterruptedError();
    }
    const stopper = this.stopper;
    // Why the run stopped early goes into the error itself, so that --json (which prints no
    // notices) and --quiet say it too.
    let stopped = '';
    if (stopper && stopper.status === 'error') {
      const line = `stopped after ${plural(done, what.noun)} (${failed} failed)${this.options.failFast && !stopper.stopsRun ? ': --fail-fast' : ''}`;
      if (stopper.stopsRun && stopper.cause !== undefined) {
        await this.deps.note(line);
        if (what.resumeHint) await this.deps.note(what.resumeHint);
        throw stopper.cause;
      }
      if (what.resumeHint) await this.deps.note(what.resumeHint);
      stopped = `; ${line}`;
    }
    const already = this.replayed > 0 ? ` (${this.replayed} already stored: answered from their idempotency keys, not stored again)` : '';
    if (failed === 0) {
      await this.deps.note(
        `${what.verb} ${plural(done, what.noun)} in ${what.seconds.toFixed(1)} s${already}${what.dryRun ? ' (dry run: nothing stored)' : ''}`,
      );
      return;
    }
    const code: ExitCode = this.invalid > 0 ? EXIT.DATA_ERROR : this.worst;
    const stored = what.dryRun
      ? `${done - failed} of ${plural(done, what.noun)} would be stored`
      : `${what.verb} ${done - failed} of ${plural(done, what.noun)}`;
    throw new PartialFailureError(`${stored}; ${failed} failed${stopped} (see the error lines on stdout)`, code, {
      hint: `fix the failed ${what.noun}s and send them again`,
    });
  }
}
