/**
 * `govctl posture`: the posture brief (docs/service.md "GET …/grc/posture-brief").
 * - TTY: a table with a bar per framework, the overall score, the failing gates and the number
 *   of systems without an attestation in the last 24 hours;
 * - piped: `name<TAB>value` lines: `overall_pct`, one per framework slug (its score), then
 *   `failing_gates` (comma-separated slugs) and `unattested_24h`;
 * - `--json`: exactly the service's body.
 */
import { Command } from 'commander';
// The modules themselves, not core/index.ts: that would initialise all of core (signing loads node:crypto).
import { isJsonNumber, jsonNumberValue, stringifyJson } from '../../core/canonical-json.js';
import { FRAMEWORK_INFO } from '../../core/controls/catalogue.js';
import type { PostureBrief } from '../../client/wire-types.js';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { printJson, printTable, type Column } from '../render.js';
import { terminalText } from '../terminal-text.js';
import { scoreBar, scoreColor } from './bar.js';

export interface PostureOptions {
  json: boolean;
}

export function createPostureCommand(factory: Factory): Command {
  const command = new Command('posture')
    .description('show the posture score overall and per framework (GET grc/posture-brief)')
    .action(async () => run({ json: factory.globals.json === true }, factory));
  command.addHelpText(
    'after',
    '\nPiped, one name<TAB>value line each: overall_pct, every framework (eu_ai_act, iso_42001, soc2_type2,\n' +
      'iso_27001, nist_airf), failing_gates (comma-separated) and unattested_24h.\n',
  );
  return addExamples(command, ['govctl posture', 'govctl posture | awk -F"\\t" \'$1 == "eu_ai_act" { print $2 }\'', 'govctl posture --json | jq .overall_pct']);
}

interface Row {
  label: string;
  pct: number;
  gate: string;
}

/** A number of the reply (lossless JSON: a number, bigint or JsonFloat); NaN for anything else. */
function num(value: unknown): number {
  return isJsonNumber(value) ? jsonNumberValue(value) : NaN;
}

/** A value for a piped line, as the service wrote it. */
function show(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined ? '' : stringifyJson(value);
}

/** A framework's display name (`EU AI Act`), or the slug for one this version does not know. */
function frameworkLabel(slug: string): string {
  return FRAMEWORK_INFO.find((info) => info.framework === slug)?.name ?? slug;
}

export async function run(options: PostureOptions, deps: Factory): Promise<void> {
  const api = await deps.api();
  const brief = await api.postureBrief();
  const out = deps.io.stdout;
  if (options.json) return printJson(out, brief);
  const failing = new Set(brief.failing_gates ?? []);
  const frameworks = brief.frameworks ?? [];

  if (!out.isTTY) {
    const lines = [
      `overall_pct\t${terminalText(show(brief.overall_pct))}`,
      ...frameworks.map((entry) => `${terminalText(String(entry.framework))}\t${terminalText(show(entry.score_pct))}`),
      `failing_gates\t${terminalText([...failing].join(','))}`,
      `unattested_24h\t${terminalText(show(brief.unattested_24h))}`,
    ];
    await out.write(lines.join('\n') + '\n');
    return;
  }

  const rows: Row[] = frameworks.map((entry) => ({
    label: `${frameworkLabel(entry.framework)} (${entry.framework})`,
    pct: num(entry.score_pct),
    gate: failing.has(entry.framework) ? 'failing' : 'passing',
  }));
  rows.push({ label: 'overall', pct: num(brief.overall_pct), gate: '' });
  const columns: Column<Row>[] = [
    { header: 'framework', value: (row) => row.label, style: (text, o, row) => (row.gate === '' ? o.color.bold(text) : text) },
    // The colour is a style: table cells are service text, shown with any ESC byte escaped (render.ts).
    { header: 'score', value: (row) => `${scoreBar(row.pct)} ${String(row.pct).padStart(3)}%`, style: (text, o, row) => scoreColor(row.pct, o)(text) },
    {
      header: 'gate',
      value: (row) => (row.gate === 'failing' ? '✗ failing' : row.gate === 'passing' ? '✓ passing' : ''),
      style: (text, o, row) => (row.gate === 'failing' ? o.color.red(text) : o.color.green(text)),
    },
  ];
  await printTable(out, columns, rows, { now: deps.clock });
  await out.write(summaryLines(brief, deps).join('\n') + '\n');
}

function summaryLines(brief: PostureBrief, deps: Factory): string[] {
  const out = deps.io.stdout;
  const failing = brief.failing_gates ?? [];
  const gates = failing.length === 0 ? out.color.green('none') : out.color.red(terminalText(failing.join(', ')));
  const unattested = num(brief.unattested_24h);
  const systems = unattested === 0 ? out.color.green('0') : out.color.yellow(String(unattested));
  return [`failing gates: ${gates}`, `systems without an attestation in the last 24 h: ${systems}`];
}
