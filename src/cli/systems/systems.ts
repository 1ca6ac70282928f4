/**
 * `govctl systems [--name N]`: the AI systems of the workspace (docs/service.md "GET …/grc/systems").
 * TTY: a table with relative times; piped: `system_name, system_id, registered, risk_tier,
 * last_evidence_at` (ISO 8601) tab-separated; `--json`: exactly the service's body.
 */
import { Command } from 'commander';
import type { SystemInfo } from '../../client/wire-types.js';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { printJson, printTable, type Column } from '../render.js';

export interface SystemsOptions {
  json: boolean;
  /** only systems whose name contains this, ignoring case (the service's filter) */
  name?: string;
}

export function createSystemsCommand(factory: Factory): Command {
  const command = new Command('systems')
    .description('list the AI systems of the workspace (GET grc/systems)')
    .option('--name <name>', 'only systems whose name contains this, ignoring case')
    .action(async (flags: { name?: string }) =>
      run({ json: factory.globals.json === true, ...(flags.name !== undefined ? { name: flags.name } : {}) }, factory),
    );
  command.addHelpText(
    'after',
    '\nA system appears once any record or attestation names it; it is registered once it has an\n' +
      'ai_risk_assessment, whose risk_level is its risk tier. Piped, one line per system:\n' +
      'system_name, system_id, registered (true/false), risk_tier, last_evidence_at (ISO 8601).\n',
  );
  return addExamples(command, [
    'govctl systems',
    'govctl systems --name loan-scorer',
    'govctl systems --json | jq -r ".systems[] | select(.registered | not) | .system_name"',
  ]);
}

const COLUMNS: readonly Column<SystemInfo>[] = [
  { header: 'system', value: (system) => system.system_name },
  { header: 'id', value: (system) => system.system_id, shrink: 'middle' },
  {
    header: 'registered',
    value: (system) => system.registered,
    kind: 'boolean',
    style: (text, out, system) => (system.registered ? out.color.green(text) : out.color.yellow(text)),
  },
  { header: 'risk tier', value: (system) => system.risk_tier ?? '' },
  { header: 'last evidence', value: (system) => system.last_evidence_at ?? '', kind: 'time' },
];

export async function run(options: SystemsOptions, deps: Factory): Promise<void> {
  const api = await deps.api();
  const body = await api.systems(options.name);
  const out = deps.io.stdout;
  if (options.json) return printJson(out, body);
  const systems = Array.isArray(body.systems) ? body.systems : [];
  if (systems.length === 0) {
    if (out.isTTY)
      await deps.note(
        options.name !== undefined ? `no system whose name contains ${options.name}` : 'no systems yet: a system appears once a record or attestation names it',
      );
    return;
  }
  await printTable(out, COLUMNS, systems, { now: deps.clock });
}
