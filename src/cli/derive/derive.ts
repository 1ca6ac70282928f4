/**
 * `govctl derive --description TEXT --risk-tier T`: the record types a described system should
 * produce and the controls each earns (POST grc/derive-controls, docs/service.md "POST …/grc/derive-controls", docs/controls.md).
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
    .action(async (flags: { description: string; riskTier: string }) =>
      run({ json: factory.globals.json === true, description: flags.description, riskTier: flags.riskTier }, factory),
    );
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

/**
 * The columns, piped (`record_type, priority, controls` comma-separated) and on a terminal, where
 * the controls wrap onto more lines instead of being cut (every control is worth seeing).
 */
const COLUMNS: readonly Column<ControlRecommendation>[] = [
  { header: 'record type', value: (row) => row.record_type },
  { header: 'priority', value: (row) => row.priority, style: (text, out, row) => priorityColour(out, row.priority)(text) },
  { header: 'controls', value: (row) => row.controls, kind: 'list', shrink: 'wrap', minWidth: 30 },
];

function priorityColour(out: OutputStream, priority: string): (text: string) => string {
  return priority === 'required' ? out.color.red.bold : priority === 'recommended' ? out.color.yellow : out.color.dim;
}

export async function run(options: DeriveOptions, deps: Factory): Promise<void> {
  const api = await deps.api();
  const body = await api.deriveControls({ description: options.description, risk_tier: options.riskTier });
  const out = deps.io.stdout;
  if (options.json) return printJson(out, body);
  const rows = Array.isArray(body.recommendations) ? body.recommendations : [];
  if (rows.length === 0) return;
  await printTable(out, COLUMNS, rows, { now: deps.clock });
}
