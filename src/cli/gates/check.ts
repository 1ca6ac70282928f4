/**
 * `govctl gates check`: the gate results (GET grc/gates/check, spec §4.8), with the verdict as
 * the exit code (design/cli.md "Exit codes"): the highest gate `exit_code`, lowered by
 * `--fail-on`. It fails closed: a service that cannot be reached or answers 5xx is 69, a reply
 * that is not a well-formed gate list is 69 too (docs/exit-codes.md), and `--on-error` never
 * softens either (the command is not a write).
 */
import { resolve } from 'node:path';
import { stopwatch } from '../../client/stopwatch.js';
import type { Factory } from '../factory.js';
import { printBeforeVerdict, type OutputStream } from '../io.js';
import { printJson, printTable, plural, type Column } from '../render.js';
import { terminalText } from '../terminal-text.js';
import { displayPath } from '../settings.js';
import { wrapCell } from '../table-fit.js';
import { applyFailOn, checkGatesReply, gatesVerdict, GatesFailedError, type CheckedGate, type FailOn, type GateStatus } from '../gate-verdict.js';

export const GATE_FORMATS = ['table', 'json', 'junit', 'github'] as const;
export type GateFormat = (typeof GATE_FORMATS)[number];

export interface GatesCheckOptions {
  /** default `soft`: exit with the gates' verdict */
  failOn: FailOn;
  /** default `table` (tab-separated lines when piped); `--json` is `json` */
  format: GateFormat;
}

const STATUS_TEXT: Record<GateStatus, string> = { pass: '✓ pass', soft: '! soft fail', hard: '✗ HARD FAIL' };

/**
 * The gates on a terminal: one line per gate (result, name, id and exit code), its reason wrapped
 * and indented below it. A list rather than a table: reasons are long and read best whole.
 */
async function printGateList(out: OutputStream, gates: readonly CheckedGate[]): Promise<void> {
  const width = out.columns || 100; // a pseudo-terminal may report 0 columns
  const pad = Math.max(...gates.map(({ status }) => STATUS_TEXT[status].length));
  const lines: string[] = [];
  for (const { gate, status } of gates) {
    const colour = status === 'pass' ? out.color.green : status === 'soft' ? out.color.yellow : out.color.red.bold;
    lines.push(
      `${colour(STATUS_TEXT[status].padEnd(pad))}  ${out.color.bold(terminalText(gate.name))} ${out.color.dim(terminalText(`(${gate.gate_id}, exit ${gate.exit_code})`))}`,
    );
    const indent = ' '.repeat(pad + 2);
    if (gate.reason) lines.push(...wrapCell(terminalText(gate.reason), Math.max(20, width - indent.length)).map((line) => indent + line));
  }
  await out.write(lines.join('\n') + '\n');
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
  const api = await deps.api();
  const body = await api.gatesCheck();
  const gates = checkGatesReply(body);
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
        const summaryFile = deps.env.GITHUB_STEP_SUMMARY;
        if (summaryFile) {
          try {
            const { appendFile } = await import('node:fs/promises');
            await appendFile(resolve(deps.cwd, summaryFile), githubSummary(gates, exitCode, options.failOn));
          } catch (error) {
            // The verdict matters more than the summary: say so and go on.
            await deps.warn(`cannot append the job summary to ${displayPath(summaryFile)}: ${(error as Error).message}`);
          }
        }
        break;
      }
      default:
        if (out.isTTY) await printGateList(out, gates);
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
