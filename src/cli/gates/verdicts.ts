/**
 * `govctl gates verdicts`: the signed gate verdicts of the workspace, newest first (GET
 * gates/verdicts). Each is logged: `govctl ledger prove <verdict_id>` proves it is in the log as
 * listed.
 */
import { Command } from 'commander';
import type { StoredVerdict } from '../../client/wire-types.js';
import { addExamples, wholeNumber } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { printJson, printTable, type Column } from '../render.js';

export interface VerdictsOptions {
  /** default 20 */
  limit: number;
  json: boolean;
}

const RESULT = ['pass', 'soft fail', 'hard fail'];

const COLUMNS: readonly Column<StoredVerdict>[] = [
  { header: 'verdict_id', value: (v) => v.verdict_id },
  { header: 'issued_at', value: (v) => v.issued_at, kind: 'time' },
  { header: 'exit_code', value: (v) => String(v.exit_code) },
  { header: 'result', value: (v) => RESULT[v.exit_code] ?? String(v.exit_code) },
  { header: 'subjects', value: (v) => (Array.isArray(v.subjects) ? v.subjects.map((s) => `${s.name}@sha256:${s.digest?.sha256}`) : []), kind: 'list' },
];

export async function run(options: VerdictsOptions, deps: Factory): Promise<void> {
  const body = await (await deps.api()).listVerdicts({ limit: options.limit });
  if (options.json) return printJson(deps.io.stdout, body);
  await printTable(deps.io.stdout, COLUMNS, Array.isArray(body.verdicts) ? body.verdicts : [], { now: deps.clock });
}

export function createVerdictsCommand(factory: Factory): Command {
  const command = new Command('verdicts')
    .description('the signed gate verdicts, newest first (GET gates/verdicts)')
    .option('--limit <n>', 'how many (1-500)', wholeNumber('--limit', { min: 1, max: 500 }), 20)
    .action(async (flags: { limit: number }) => run({ limit: flags.limit, json: factory.globals.json === true }, factory));
  return addExamples(command, ['govctl gates verdicts', "govctl gates verdicts --json | jq -r '.verdicts[0].verdict_id'"]);
}
