/**
 * `govctl derive --description TEXT --risk-tier T`: the record types a described system should
 * produce and the controls each earns (POST grc/derive-controls, spec §4.9, docs/controls.md).
 * TTY: a table; piped: `record_type, priority, controls` (comma-separated) tab-separated;
 * `--json`: exactly the service's body.
 */
import { Command, Option } from 'commander';
import { RISK_TIERS } from '../../core/index.js';
import type { ControlRecommendation } from '../../client/wire-types.js';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import type { OutputStream } from '../io.js';
import { printJson, printTable, type Column } from '../render.js';
import { terminalText } from '../terminal-text.js';
import { wrapText } from '../gates/wrap.js';

export interface DeriveOptions {
  json: boolean;
  description: string;
  riskTier: string;
}

export function createDeriveCommand(factory: Factory): Command {
  const command = new Command('derive')
    .description('recommend the record types a system needs, and the controls each earns (POST grc/derive-controls)')
    .requiredOption('--description <text>', 'what the system does, in plain words (keywords drive the rules)')
    .addOption(new Option('--risk-tier <tier>', 'the EU AI Act risk tier').choices(RISK_TIERS).makeOptionMandatory())
    .action(async (flags: { description: string; riskTier: string }) => run({ json: factory.globals.json === true, description: flags.description, riskTier: flags.riskTier }, factory));
  command.addHelpText(
    'after',
    '\nPriorities are required, recommended or optional; the rules are in docs/controls.md. Piped, one line\n' +
      'per record type: record_type, priority, controls (comma-separated).\n',
  );
  return addExamples(command, [
    'govctl derive --description "Scores consumer loan applications using the OpenAI API; deployed via CI" --risk-tier limited',
    'govctl derive --description "internal chatbot" --risk-tier minimal --json | jq -r ".recommendations[].record_type"',
  ]);
}

const TSV_COLUMNS: readonly Column<ControlRecommendation>[] = [
  { header: 'record type', value: (row) => row.record_type },
  { header: 'priority', value: (row) => row.priority },
  { header: 'controls', value: (row) => row.controls, kind: 'list' },
];

function priorityColour(out: OutputStream, priority: string): (text: string) => string {
  return priority === 'required' ? out.color.red.bold : priority === 'recommended' ? out.color.yellow : out.color.dim;
}

/** The recommendations on a terminal: a table whose controls column wraps to the terminal's width. */
async function printRecommendations(out: OutputStream, rows: readonly ControlRecommendation[]): Promise<void> {
  const width = out.columns ?? 100;
  const typeWidth = Math.max(11, ...rows.map((row) => String(row.record_type).length)) + 2;
  const priorityWidth = Math.max(8, ...rows.map((row) => String(row.priority).length)) + 2;
  // 4 border characters, and at least 30 columns for the controls.
  const controlsWidth = Math.max(30, width - typeWidth - priorityWidth - 4);
  const lines = rows.map((row) => {
    const controls = wrapText((Array.isArray(row.controls) ? row.controls : []).join(', '), controlsWidth - 2);
    return [terminalText(String(row.record_type)), priorityColour(out, row.priority)(terminalText(String(row.priority))), controls.map(terminalText).join('\n')];
  });
  const { default: Table } = await import('cli-table3');
  const table = new Table({
    head: ['RECORD TYPE', 'PRIORITY', 'CONTROLS'].map((text) => out.color.bold(text)),
    colWidths: [typeWidth, priorityWidth, controlsWidth],
    style: { head: [], border: out.colorEnabled ? ['grey'] : [] },
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
  });
  table.push(...lines);
  await out.write(table.toString() + '\n');
}

export async function run(options: DeriveOptions, deps: Factory): Promise<void> {
  const api = await deps.api();
  const body = await api.deriveControls({ description: options.description, risk_tier: options.riskTier });
  const out = deps.io.stdout;
  if (options.json) return printJson(out, body);
  const rows = Array.isArray(body.recommendations) ? body.recommendations : [];
  if (rows.length === 0) return;
  if (out.isTTY) await printRecommendations(out, rows);
  else await printTable(out, TSV_COLUMNS, rows, { now: deps.clock });
}
