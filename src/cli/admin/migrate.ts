/**
 * `govctl admin migrate --from FILE --to URL`: copies a SQLite service database into an empty
 * PostgreSQL one (server/store/sqlite-to-postgres.ts), then prints one line per workspace: its log's
 * size and root hash on both sides, computed from the leaf entries. Any difference fails the run
 * (2, as a failed log check); a target with data is refused (78) and left as it was.
 */
import { Command } from 'commander';
import { addExamples, markWindsDown, wholeNumber } from '../command-kit.js';
import { CliError, ConfigError, InterruptedError, LedgerCheckError, UsageError } from '../errors.js';
import type { Factory } from '../factory.js';
import { startProgress } from '../progress.js';
import { printJson, printTable, type Column } from '../render.js';
import { displayPath } from '../settings.js';
import { DATABASE_URL_ENV, DB_FLAG, databaseLocation, displayDatabase, mapDatabaseError, loadServer } from './database.js';
import { isPostgresLocation } from '../../server/store/location.js';
import type { CopyResult, WorkspaceLogComparison } from '../../server/store/sqlite-to-postgres.js';

export interface AdminMigrateOptions {
  json: boolean;
  /** the SQLite database file */
  from: string;
  /** the PostgreSQL URL (default DATABASE_URL) */
  to?: string | undefined;
  /** rows per INSERT */
  batchSize?: number;
}

/** On a narrow terminal ids and hashes are cut in the middle (their start and end still compare); piped and --json, whole. */
const COLUMNS: Column<WorkspaceLogComparison>[] = [
  { header: 'WORKSPACE', value: (log) => log.workspace_id, shrink: 'id' },
  { header: 'TREE_SIZE', value: (log) => log.source.tree_size },
  { header: 'ROOT', value: (log) => log.source.root, shrink: 'middle' },
  { header: 'TARGET_SIZE', value: (log) => log.target.tree_size },
  { header: 'TARGET_ROOT', value: (log) => log.target.root, shrink: 'middle' },
  { header: 'RESULT', value: (log) => (log.same ? 'same' : 'DIFFERENT') },
];

export function createAdminMigrateCommand(factory: Factory): Command {
  const command = new Command('migrate')
    .description("copy a SQLite service database into an empty PostgreSQL database and check every workspace's log root")
    .requiredOption('--from <file>', 'the SQLite database (no `govctl serve` may run on it meanwhile)')
    .option('--to <url>', `the PostgreSQL database, postgres://… (default: $${DATABASE_URL_ENV}); it must hold no data`)
    .option('--batch-size <n>', 'rows written per statement', wholeNumber('--batch-size', { min: 1, max: 100_000 }))
    .action(async (flags: { from: string; to?: string; batchSize?: number }) =>
      run(
        { json: factory.globals.json === true, from: flags.from, to: flags.to, ...(flags.batchSize !== undefined ? { batchSize: flags.batchSize } : {}) },
        factory,
      ),
    );
  // Ctrl-C ends the copy at the next batch, rolled back (below), rather than leaving it running
  markWindsDown(command);
  command.addHelpText(
    'after',
    '\nEverything is copied in one PostgreSQL transaction: an interrupted run leaves the target without data, and\n' +
      'running it again starts over. A target that holds data is refused (78). Afterwards one line per workspace\n' +
      "gives its log's size and root on both sides; any difference exits 2. Then run every replica with\n" +
      "`govctl serve --db URL --log-key FILE.ledger-key`: the SQLite database's log key, so that the log goes on\n" +
      'under the verifier key auditors pinned (docs/service.md, "Moving from SQLite").\n',
  );
  return addExamples(command, [
    'govctl admin migrate --from /var/lib/govctl/server.db --to postgres://govctl@db.internal/govctl',
    'DATABASE_URL=postgres://govctl@db.internal/govctl govctl admin migrate --from server.db --json',
  ]);
}

export async function run(options: AdminMigrateOptions, deps: Factory): Promise<void> {
  const from = databaseLocation(options.from, deps, true, 'admin migrate', { ...DB_FLAG, flag: '--from FILE' });
  if (isPostgresLocation(from))
    throw new UsageError('--from must be a SQLite database file', { field: '--from', hint: 'the PostgreSQL database goes in --to' });
  if (options.to !== undefined && !isPostgresLocation(options.to)) {
    throw new UsageError('--to must be a postgres:// URL', { field: '--to', hint: 'e.g. --to postgres://govctl@db.internal/govctl (the database must exist)' });
  }
  const to =
    options.to ??
    databaseLocation(undefined, deps, false, 'admin migrate', {
      flag: '--to URL',
      // the copy's target, always PostgreSQL: the other commands' hint (the database serve uses) would name the source
      hint: 'give the postgres:// URL of the empty PostgreSQL database to copy into',
    });
  const server = await loadServer();
  const progress = await startProgress(deps, { label: 'migrating', total: undefined, unit: 'items', detail: '{table}', fields: { table: '' } });
  let result: CopyResult;
  try {
    result = await server.copySqliteToPostgres(from, to, {
      ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : {}),
      onProgress: (p) => {
        // thrown inside the copy's transaction: PostgreSQL rolls it back, the target stays empty
        if (deps.signal.aborted) throw new InterruptedError();
        progress.update(p.done, { table: `${p.table} (${p.done}/${p.total} rows)` });
      },
    });
  } catch (error) {
    if (error instanceof server.MigrationTargetNotEmptyError) {
      throw new ConfigError(`${displayDatabase(to)}: ${error.message}`, {
        field: '--to',
        hint: 'give a new, empty database (createdb NAME), or empty this one first (DROP SCHEMA public CASCADE; CREATE SCHEMA public;)',
      });
    }
    if (error instanceof server.MigrationSideError) {
      if (error.side === 'source' && error.cause instanceof server.DatabaseInUseError) {
        throw new ConfigError(`a govctl serve is running on ${displayPath(from)}: stop it before migrating`, {
          field: '--from',
          hint: 'a copy taken while records arrive would miss them',
        });
      }
      const mapped = mapDatabaseError(error.cause, error.side === 'source' ? from : to, server);
      if (mapped !== error.cause && mapped instanceof CliError) throw withField(mapped, error.side === 'source' ? '--from' : '--to');
      throw mapped;
    }
    throw error;
  } finally {
    progress.stop();
  }
  const differ = result.logs.filter((log) => !log.same);
  if (options.json) {
    await printJson(deps.io.stdout, { from: displayPath(from), to: displayDatabase(to), rows: result.rows, workspaces: result.logs });
  } else {
    await printTable(deps.io.stdout, COLUMNS, result.logs, { now: deps.clock });
    const total = Object.values(result.rows).reduce((sum, n) => sum + n, 0);
    await deps.note(
      `copied ${total} rows (${result.rows.evidence ?? 0} records, ${result.rows.attestations ?? 0} attestations, ${result.rows.ledger_leaves ?? 0} log leaves) into ${displayDatabase(to)}`,
    );
  }
  if (differ.length > 0) {
    throw new LedgerCheckError(
      `the log of ${differ.length === 1 ? `workspace ${differ[0].workspace_id}` : `${differ.length} workspaces`} differs after the copy`,
      {
        hint: 'do not serve the target; empty it and run the migration again',
      },
    );
  }
  if (!options.json)
    await deps.note(`every log root matches; serve it with \`govctl serve --db URL --log-key ${displayPath(from)}.ledger-key\` on every replica`);
}

/** The error naming the flag of the side that failed (mapDatabaseError names --db). */
function withField(error: CliError, field: string): CliError {
  if (error.field === '--db') (error as { field?: string }).field = field;
  return error;
}
