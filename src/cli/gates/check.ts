/**
 * `govctl gates check`: the gate results (GET grc/gates/check, docs/service.md "GET …/grc/gates/check"), with the verdict as
 * the exit code (docs/exit-codes.md): the highest gate `exit_code`, lowered by
 * `--fail-on`. It fails closed: a service that cannot be reached or answers 5xx is 69, a reply
 * that is not a well-formed gate list is 69 too (docs/exit-codes.md), and `--on-error` never
 * softens either (the command is not a write).
 */
import { resolve } from 'node:path';
import { stopwatch } from '../../client/stopwatch.js';
import type { Factory } from '../factory.js';
import { describeError, oneLine } from '../errors.js';
import { exitCodeFor } from '../exit-codes.js';
import { printBeforeVerdict, type OutputStream } from '../io.js';
import { printJson, printTable, plural, type Column } from '../render.js';
import { redactUrls } from '../terminal-text.js';
import { displayPath } from '../settings.js';
import { wrapProse } from '../table-fit.js';
import { applyFailOn, checkGatesReply, gatesVerdict, GatesFailedError, type CheckedGate, type FailOn, type GateStatus } from './verdict.js';

export const GATE_FORMATS = ['table', 'json', 'junit', 'github'] as const;
export type GateFormat = (typeof GATE_FORMATS)[number];

export interface GatesCheckOptions {
  /** default `soft`: exit with the gates' verdict */
  failOn: FailOn;
  /** default `table` (tab-separated lines when piped); `--json` is `json` */
  format: GateFormat;
}

const STATUS_TEXT: Record<GateStatus, string> = { pass: '✓ pass', soft: '! soft fail', hard: '✗ HARD FAIL' };
const ORDER: Record<GateStatus, number> = { hard: 0, soft: 1, pass: 2 };

/**
 * A failing gate's reason in its parts, when it has the form the reference service writes
 * (`0% < 80%: record a, b (field) to cover CONTROL_1, CONTROL_2`); undefined for any other text,
 * which is then shown whole. Display only: the verdict never depends on it.
 */
export function reasonParts(reason: string): { score: string; records: string; controls: string } | undefined {
  const match = /^(\d+(?:\.\d+)?% < \d+(?:\.\d+)?%): record (.+) to cover (.+)$/s.exec(reason);
  return match ? { score: match[1], records: match[2], controls: match[3] } : undefined;
}

/** The items of a reason's record list: `a, b (f1, f2), c` → `a`, `b (f1, f2)`, `c`. */
function recordItems(records: string): string[] {
  return records.split(/, (?![^(]*\))/).filter(Boolean);
}

/**
 * The gates on a terminal: the verdict first; one table (the style of every listing), the
 * blocking failures first, with each gate's score; then the record types to add, for the
 * blocking gates and then for the rest, as wrapped lines that never break a word. Control ids
 * are many and read by few: `-v` shows each gate's whole reason in the table instead.
 */
async function printGateList(out: OutputStream, gates: readonly CheckedGate[], verdict: string, verbose: boolean, now: () => Date): Promise<void> {
  const width = out.columns || 80; // a pseudo-terminal may report 0 columns
  const colour = (status: GateStatus) => (status === 'pass' ? out.color.green : status === 'soft' ? out.color.yellow : out.color.red.bold);
  const sorted = gates
    .map((checked, index) => ({ checked, index }))
    .sort((a, b) => ORDER[a.checked.status] - ORDER[b.checked.status] || a.index - b.index)
    .map(({ checked }) => checked);
  const parts = new Map(sorted.map((checked) => [checked, checked.gate.reason === undefined ? undefined : reasonParts(checked.gate.reason)]));
  const columns: Column<CheckedGate>[] = [
    { header: 'result', value: ({ status }) => STATUS_TEXT[status], minWidth: 11, style: (text, _out, { status }) => colour(status)(text) },
    { header: 'gate', value: ({ gate }) => gate.name, shrink: 'wrap', minWidth: 16 },
    { header: 'id', value: ({ gate }) => gate.gate_id, shrink: 'id', optional: true },
    verbose
      ? { header: 'reason', value: ({ gate }) => gate.reason ?? '', shrink: 'wrap', minWidth: 26 }
      : {
          header: 'score',
          value: (checked) => (checked.status === 'pass' ? 'passes' : (parts.get(checked)?.score ?? checked.gate.reason ?? '')),
          shrink: 'wrap',
          minWidth: 8,
        },
  ];
  await out.write(`${verdict}\n\n`);
  await printTable(out, columns, sorted, { now });
  if (verbose) return;
  // The record types to add: those of the blocking gates, then the others' not named yet.
  const named = new Set<string>();
  const lines: string[] = [];
  for (const status of ['hard', 'soft'] as const) {
    const failing = sorted.filter((checked) => checked.status === status);
    const items: string[] = [];
    for (const item of failing.flatMap((checked) => recordItems(parts.get(checked)?.records ?? ''))) {
      const type = item.split(' ')[0];
      if (!named.has(type)) items.push(item);
      named.add(type);
    }
    if (items.length === 0) continue;
    const lead =
      status === 'hard'
        ? `To pass the blocking ${failing.length === 1 ? 'gate' : 'gates'}, add`
        : lines.length > 0
          ? 'For the other gates, also add'
          : `To pass the failing ${failing.length === 1 ? 'gate' : 'gates'}, add`;
    lines.push(...wrapProse(`${lead}: ${items.join(', ')}.`, width, '  '));
  }
  if (lines.length > 0) await out.write(`\n${lines.join('\n')}\n`);
}

/** The verdict in one sentence: what the exit code means and which gates decide it. */
function verdictLine(out: OutputStream, gates: readonly CheckedGate[], exitCode: number, failOn: FailOn): string {
  const hard = gates.filter((checked) => checked.status === 'hard').length;
  const soft = gates.filter((checked) => checked.status === 'soft').length;
  const failing = [hard > 0 ? `${plural(hard, 'blocking gate')} failing` : '', soft > 0 ? `${plural(soft, 'non-blocking gate')} failing` : '']
    .filter(Boolean)
    .join(', ');
  if (hard + soft === 0) return out.color.green(`✓ passed: all ${plural(gates.length, 'gate')} pass (exit 0)`);
  if (exitCode === 0) return out.color.yellow(`! passed (--fail-on ${failOn}): ${failing} (exit 0)`);
  return exitCode === 2 ? out.color.red.bold(`✗ blocked: ${failing} (exit 2)`) : out.color.yellow(`! failed: ${failing} (exit 1)`);
}

/**
 * A check that reached no verdict, in the CI formats: an `::error` annotation and a job-summary
 * row (github), or a JUnit document with one errored test case (junit), so that an artifact step
 * never finds an empty file. Other formats leave it to the error line on stderr.
 */
async function reportNoVerdict(error: unknown, options: GatesCheckOptions, deps: Factory, seconds: number): Promise<void> {
  if (options.format !== 'github' && options.format !== 'junit') return;
  const described = describeError(error);
  const message = oneLine(redactUrls(described.message)) + (described.hint ? `; ${described.hint}` : '');
  const exitCode = exitCodeFor(error);
  if (options.format === 'junit') {
    const { junitErrorReport } = await import('./junit.js');
    await deps.io.stdout.write(junitErrorReport({ code: described.code, message, exitCode }, { now: deps.clock(), seconds }));
    return;
  }
  const { githubErrorAnnotation, githubErrorSummary } = await import('./github.js');
  await deps.io.stdout.write(githubErrorAnnotation(message, exitCode));
  await appendSummary(githubErrorSummary(message, exitCode), deps);
}

/** Appends to the GitHub job summary when `GITHUB_STEP_SUMMARY` names its file. */
async function appendSummary(markdown: string, deps: Factory): Promise<void> {
  const summaryFile = deps.env.GITHUB_STEP_SUMMARY;
  if (!summaryFile) return;
  try {
    const { appendFile } = await import('node:fs/promises');
    await appendFile(resolve(deps.cwd, summaryFile), markdown);
  } catch (error) {
    // The verdict matters more than the summary: say so and go on.
    await deps.warn(`cannot append the job summary to ${displayPath(summaryFile)}: ${(error as Error).message}`);
  }
}

const TSV_COLUMNS: readonly Column<CheckedGate>[] = [
  { header: 'gate_id', value: ({ gate }) => gate.gate_id },
  { header: 'result', value: ({ status }) => status },
  { header: 'exit_code', value: ({ gate }) => String(gate.exit_code) },
  { header: 'name', value: ({ gate }) => gate.name },
  { header: 'reason', value: ({ gate }) => gate.reason ?? '' },
];

export async function run(options: GatesCheckOptions, deps: Factory): Promise<void> {
  const elapsed = stopwatch();
  let body: unknown;
  let gates: CheckedGate[];
  try {
    const api = await deps.api();
    body = await api.gatesCheck();
    gates = checkGatesReply(body);
  } catch (error) {
    // No verdict (service down, key refused, nothing configured): a CI format still says so where
    // CI reads it, and the error then ends the run with its own exit code.
    await printBeforeVerdict(() => reportNoVerdict(error, options, deps, elapsed() / 1000));
    throw error;
  }
  const verdict = gatesVerdict(gates);
  const exitCode = applyFailOn(verdict, options.failOn);
  const out = deps.io.stdout;

  // A reader that stops early (`| head -1`) ends the report, not the verdict: the exit code stands.
  await printBeforeVerdict(async () => {
    switch (options.format) {
      case 'json':
        await printJson(out, body);
        break;
      case 'junit': {
        const { junitReport } = await import('./junit.js');
        await out.write(junitReport(gates, { now: deps.clock(), seconds: elapsed() / 1000 }));
        break;
      }
      case 'github': {
        const { githubAnnotations, githubSummary } = await import('./github.js');
        await out.write(githubAnnotations(gates));
        await appendSummary(githubSummary(gates, exitCode, options.failOn), deps);
        break;
      }
      default:
        if (out.isTTY) await printGateList(out, gates, verdictLine(out, gates, exitCode, options.failOn), deps.globals.verbose === true, deps.clock);
        else await printTable(out, TSV_COLUMNS, gates, { now: deps.clock });
    }
  });

  const hard = gates.filter((checked) => checked.status === 'hard');
  const soft = gates.filter((checked) => checked.status === 'soft');
  if (verdict === 0) return;
  const ids = (list: CheckedGate[]) => list.map(({ gate }) => gate.gate_id).join(', ');
  const parts = [
    hard.length > 0 ? `${plural(hard.length, 'blocking gate')} failing (${ids(hard)})` : '',
    soft.length > 0 ? `${plural(soft.length, 'non-blocking gate')} failing (${ids(soft)})` : '',
  ].filter(Boolean);
  const summary = parts.join(', ');
  if (exitCode === 0) {
    await deps.note(`${summary}; not failing the run (--fail-on ${options.failOn})`);
    return;
  }
  throw new GatesFailedError(`${summary}: exit ${exitCode}`, exitCode, {
    hint:
      hard.length > 0
        ? 'record the evidence each reason names'
        : 'record the evidence each reason names, or pass --fail-on hard to let non-blocking gates warn only',
  });
}
