/**
 * `govctl admin gates set|unset|show --db FILE --workspace WS`: a workspace's gate policy
 * (docs/controls.md "Gates"): per framework a mode, `required` (blocking, exit code 2 when failing)
 * or `advisory` (exit code 1), and a threshold percent. Unset frameworks keep the default policy.
 * Each change is logged in the workspace's transparency log with who made it (`--by`, default the
 * login name) and when (docs/ledger.md, "Gate policy changes").
 */
import { Argument, Command, Option } from 'commander';
import { FRAMEWORKS, GATE_MODES, type Framework, type GateMode } from '../../core/index.js';
import type { GatePolicyEntry } from '../../server/index.js';
import { addExamples, wholeNumber } from '../command-kit.js';
import { UsageError } from '../errors.js';
import type { Factory } from '../factory.js';
import { printJson, printTable, type Column } from '../render.js';
import { databaseLocation, dbOption, withDatabaseErrors } from './database.js';
import { adminWorkspace } from './options.js';

export interface AdminGatesSetOptions {
  json: boolean;
  /** the database (--db; default DATABASE_URL) */
  db?: string | undefined;
  workspaceId: string;
  framework: Framework;
  mode?: GateMode;
  threshold?: number;
  /** who makes the change, as logged */
  changedBy?: string;
}

export interface AdminGatesUnsetOptions {
  json: boolean;
  db?: string | undefined;
  workspaceId: string;
  framework: Framework;
  changedBy?: string;
}

export interface AdminGatesShowOptions {
  json: boolean;
  /** the database (--db; default DATABASE_URL) */
  db?: string | undefined;
  workspaceId: string;
}

/** What `--json` prints for both commands. */
export interface GatePolicyReport {
  workspace_id: string;
  gates: GatePolicyEntry[];
}

const COLUMNS: readonly Column<GatePolicyEntry>[] = [
  { header: 'framework', value: (entry) => entry.framework },
  { header: 'mode', value: (entry) => entry.mode, style: (text, out, entry) => (entry.mode === 'required' ? out.color.bold(text) : text) },
  { header: 'threshold', value: (entry) => `${entry.threshold}%` },
  { header: 'source', value: (entry) => entry.source, style: (text, out, entry) => (entry.source === 'default' ? out.color.dim(text) : text) },
];

const TSV_COLUMNS: readonly Column<GatePolicyEntry>[] = [
  { header: 'framework', value: (entry) => entry.framework },
  { header: 'mode', value: (entry) => entry.mode },
  { header: 'threshold', value: (entry) => String(entry.threshold) },
  { header: 'source', value: (entry) => entry.source },
];

async function printPolicy(deps: Factory, json: boolean, workspaceId: string, gates: GatePolicyEntry[]): Promise<void> {
  const out = deps.io.stdout;
  if (json) return printJson(out, { workspace_id: workspaceId, gates } satisfies GatePolicyReport);
  await printTable(out, out.isTTY ? COLUMNS : TSV_COLUMNS, gates, { now: deps.clock });
}

export function createAdminGatesSetCommand(factory: Factory): Command {
  const command = new Command('set')
    .description("set one framework's gate for a workspace: its mode and threshold")
    .usage('<framework> --mode required|advisory --threshold N --db FILE --workspace WS')
    .addArgument(new Argument('<framework>', 'the framework').choices(FRAMEWORKS))
    .addOption(new Option('--mode <mode>', 'required (blocking: exit code 2 when failing) or advisory (exit code 1)').choices(GATE_MODES))
    .addOption(new Option('--threshold <percent>', 'the score that passes, 0–100 (equal passes)').argParser(wholeNumber('--threshold', { min: 0, max: 100 })))
    .addOption(byOption())
    .addOption(dbOption())
    .action(async (framework: Framework, flags: { db?: string; mode?: GateMode; threshold?: number; by?: string }) =>
      runSet(
        {
          json: factory.globals.json === true,
          db: flags.db,
          workspaceId: adminWorkspace(factory, true, 'admin gates set'),
          framework,
          ...(flags.mode !== undefined ? { mode: flags.mode } : {}),
          ...(flags.threshold !== undefined ? { threshold: flags.threshold } : {}),
          ...changedBy(flags.by, factory),
        },
        factory,
      ),
    );
  command.addHelpText('after', "\n--workspace WS is the global option. Prints the workspace's whole policy; --json prints {workspace_id, gates}.\n");
  return addExamples(command, [
    'govctl admin gates set eu_ai_act --mode required --threshold 90 --db server.db --workspace ws_…',
    'govctl admin gates set soc2_type2 --mode advisory --db server.db --workspace ws_…',
  ]);
}

export async function runSet(options: AdminGatesSetOptions, deps: Factory): Promise<void> {
  if (options.mode === undefined && options.threshold === undefined) {
    throw new UsageError('admin gates set needs --mode, --threshold or both', { hint: 'e.g. --mode required --threshold 80' });
  }
  const path = databaseLocation(options.db, deps, true, 'admin gates set');
  const gates = await withDatabaseErrors(path, (server) =>
    server.setGatePolicy(path, {
      workspaceId: options.workspaceId,
      framework: options.framework,
      ...(options.mode !== undefined ? { mode: options.mode } : {}),
      ...(options.threshold !== undefined ? { threshold: options.threshold } : {}),
      ...(options.changedBy !== undefined ? { changedBy: options.changedBy } : {}),
    }),
  );
  await printPolicy(deps, options.json, options.workspaceId, gates);
}

/** `--by NAME`: who makes a change, as the log records it. */
function byOption(): Option {
  return new Option('--by <name>', 'who makes the change, as the transparency log records it (default: $USER)');
}

/** The change's author: `--by`, else the login name of the environment, else the service's default. */
function changedBy(by: string | undefined, factory: Factory): { changedBy?: string } {
  const name = by ?? factory.env.USER ?? factory.env.LOGNAME;
  return name !== undefined && name.trim() !== '' ? { changedBy: name } : {};
}

export function createAdminGatesUnsetCommand(factory: Factory): Command {
  const command = new Command('unset')
    .description("put one framework's gate of a workspace back to the default")
    .usage('<framework> --db FILE --workspace WS')
    .addArgument(new Argument('<framework>', 'the framework').choices(FRAMEWORKS))
    .addOption(byOption())
    .addOption(dbOption())
    .action(async (framework: Framework, flags: { db?: string; by?: string }) =>
      runUnset(
        {
          json: factory.globals.json === true,
          db: flags.db,
          workspaceId: adminWorkspace(factory, true, 'admin gates unset'),
          framework,
          ...changedBy(flags.by, factory),
        },
        factory,
      ),
    );
  command.addHelpText('after', "\n--workspace WS is the global option. Prints the workspace's whole policy; --json prints {workspace_id, gates}.\n");
  return addExamples(command, ['govctl admin gates unset soc2_type2 --db server.db --workspace ws_…']);
}

export async function runUnset(options: AdminGatesUnsetOptions, deps: Factory): Promise<void> {
  const path = databaseLocation(options.db, deps, true, 'admin gates unset');
  const gates = await withDatabaseErrors(path, (server) =>
    server.resetGatePolicy(path, {
      workspaceId: options.workspaceId,
      framework: options.framework,
      ...(options.changedBy !== undefined ? { changedBy: options.changedBy } : {}),
    }),
  );
  await printPolicy(deps, options.json, options.workspaceId, gates);
}

export function createAdminGatesShowCommand(factory: Factory): Command {
  const command = new Command('show')
    .description("show a workspace's gate policy: every framework, its mode, threshold and whether it is the default")
    .usage('--db FILE --workspace WS')
    .addOption(dbOption())
    .action(async (flags: { db?: string }) =>
      runShow({ json: factory.globals.json === true, db: flags.db, workspaceId: adminWorkspace(factory, true, 'admin gates show') }, factory),
    );
  command.addHelpText('after', '\nPiped, one line per framework: framework, mode, threshold, source (workspace or default).\n');
  return addExamples(command, ['govctl admin gates show --db server.db --workspace ws_…']);
}

export async function runShow(options: AdminGatesShowOptions, deps: Factory): Promise<void> {
  const path = databaseLocation(options.db, deps, true, 'admin gates show');
  const gates = await withDatabaseErrors(path, (server) => server.getGatePolicy(path, { workspaceId: options.workspaceId }));
  await printPolicy(deps, options.json, options.workspaceId, gates);
}
