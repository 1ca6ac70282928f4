/**
 * `govctl gates check --format github`: GitHub Actions workflow commands, which the runner turns
 * into annotations on the run: `::error` for every failing blocking gate first, then `::warning`
 * for every failing non-blocking one, then `::notice` for the passing ones. With
 * `GITHUB_STEP_SUMMARY` set, a Markdown table is appended to the job summary as well.
 * Escaping follows the runner's rules (actions/toolkit `command.ts`).
 */
import type { CheckedGate, GateStatus } from '../gate-verdict.js';

/** A workflow command's message: `%`, CR and LF escaped. */
export function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** A workflow command's property value (`title=…`): as data, and `:` and `,` too. */
export function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

const LEVEL: Record<GateStatus, 'error' | 'warning' | 'notice'> = { hard: 'error', soft: 'warning', pass: 'notice' };
const ORDER: Record<GateStatus, number> = { hard: 0, soft: 1, pass: 2 };

function label(status: GateStatus): string {
  return status === 'hard' ? 'blocking gate failing' : status === 'soft' ? 'gate failing (non-blocking)' : 'gate passing';
}

/** The workflow commands, one per gate, blocking failures first; ends in a newline. */
export function githubAnnotations(gates: readonly CheckedGate[]): string {
  const sorted = gates.map((checked, index) => ({ checked, index })).sort((a, b) => ORDER[a.checked.status] - ORDER[b.checked.status] || a.index - b.index);
  return (
    sorted
      .map(({ checked: { gate, status } }) => {
        const title = `${gate.name} (${gate.gate_id})`;
        const message = status === 'pass' ? label(status) : `${label(status)}: ${gate.reason ?? 'no reason given'}`;
        return `::${LEVEL[status]} title=${escapeProperty(title)}::${escapeData(message)}`;
      })
      .join('\n') + '\n'
  );
}

/** A Markdown table cell: pipes escaped, line breaks as `<br>`. */
function cell(text: string): string {
  return text
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/\r?\n|\r/g, '<br>');
}

const ICON: Record<GateStatus, string> = { hard: '❌ hard fail', soft: '⚠️ soft fail', pass: '✅ pass' };

/** The job summary: a heading, one table row per gate, and the exit code it leads to. */
export function githubSummary(gates: readonly CheckedGate[], exitCode: number, failOn: string): string {
  const rows = gates.map(({ gate, status }) => `| ${cell(gate.name)} | \`${cell(gate.gate_id)}\` | ${ICON[status]} | ${cell(gate.reason ?? '')} |`);
  const verdict = exitCode === 0 ? 'passed' : exitCode === 1 ? 'soft failure' : 'blocked';
  return [
    '### govctl gates check',
    '',
    '| gate | id | result | reason |',
    '|---|---|---|---|',
    ...rows,
    '',
    `**Result:** ${verdict} (exit code ${exitCode}, \`--fail-on ${failOn}\`)`,
    '',
    '',
  ].join('\n');
}
