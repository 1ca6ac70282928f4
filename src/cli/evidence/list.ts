/**
 * `govctl evidence list`: stored records, newest first (GET grc/evidence, docs/service.md "GET …/grc/evidence"). `--all`
 * follows the service's `next_cursor` (docs/wire-format.md) past the 200-record page limit, over all time
 * unless `--days` or `--since` narrows it.
 */
import { Command, Option } from 'commander';
import { stringifyJson } from '../../core/canonical-json.js';
import { RECORD_TYPES } from '../../core/records/types.js';
import type { ServiceApi } from '../../client/api.js';
import type { EvidenceList, EvidenceListItem, EvidenceQuery } from '../../client/wire-types.js';
import { addExamples, wholeNumber } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { isoTime } from './export.js';
import { plural, printJson, printTable, type Column } from '../render.js';

/** Options of `evidence list`. */
export interface EvidenceListOptions {
  /** filter by system: only the `--system` flag filters (an environment default does not) */
  system?: string;
  type?: string;
  days?: number;
  /** ISO 8601 lower bound of occurred_at (instead of days) */
  since?: string;
  /** page size; with `--all` each page's (default 200) */
  limit?: number;
  all: boolean;
  cursor?: string;
  json: boolean;
}

/** The `since` of a listing of all time: before any record a workspace can hold. */
export const ALL_TIME = '0000-01-01T00:00:00Z';

/** The largest page the service gives (docs/service.md "GET …/grc/evidence"). */
export const MAX_PAGE = 200;

/** Columns: the piped order is the documented TSV format (docs/cli.md). */
export const EVIDENCE_COLUMNS: readonly Column<EvidenceListItem>[] = [
  { header: 'record id', value: (r) => r.record_id, shrink: 'middle' },
  { header: 'type', value: (r) => r.record_type },
  { header: 'system', value: (r) => r.system_name },
  { header: 'occurred', value: (r) => r.occurred_at, kind: 'time' },
  { header: 'signed', value: (r) => r.signed, kind: 'boolean', style: (text, out, r) => (r.signed ? out.color.green(text) : out.color.dim(text)) },
  { header: 'source', value: (r) => r.source },
  { header: 'controls', value: (r) => r.mapped_controls, kind: 'list', ttyKind: 'count' },
];

/** Every page of a listing from `query.cursor` on, following `next_cursor` (docs/wire-format.md). */
export async function* allPages(api: ServiceApi, query: EvidenceQuery): AsyncGenerator<EvidenceList> {
  for (let cursor = query.cursor; ;) {
    const page = await api.listEvidence(cursor === undefined ? query : { ...query, cursor });
    yield page;
    if (!page.next_cursor || page.records.length === 0) return;
    cursor = page.next_cursor;
  }
}

export function createEvidenceListCommand(factory: Factory): Command {
  const command = new Command('list')
    .description('list stored evidence records, newest first')
    .addOption(new Option('--type <record-type>', 'only this record type').choices(RECORD_TYPES))
    .addOption(
      new Option('--days <n>', 'look back this many days (default 90; with --all, all time)').argParser(wholeNumber('--days', { min: 1 })).conflicts('since'),
    )
    .addOption(new Option('--since <time>', 'only records that occurred at or after this ISO 8601 date or date-time').argParser(isoTime('--since')))
    .addOption(
      new Option('--limit <n>', `records per page, at most ${MAX_PAGE} (service default 50)`).argParser(wholeNumber('--limit', { min: 1, max: MAX_PAGE })),
    )
    .option('--all', 'every page, following next_cursor; all time unless --days or --since')
    .option('--cursor <cursor>', 'start at this page (a next_cursor from a previous --json listing)')
    .action(async (opts: { type?: string; days?: number; since?: string; limit?: number; all?: boolean; cursor?: string }) => {
      const settings = await factory.settings();
      await run(
        {
          system: settings.sources.systemName?.kind === 'flag' ? settings.systemName : undefined,
          type: opts.type,
          days: opts.days,
          ...(opts.since !== undefined ? { since: opts.since } : {}),
          limit: opts.limit,
          all: opts.all === true,
          cursor: opts.cursor,
          json: factory.globals.json === true,
        },
        factory,
      );
    });
  return addExamples(command, [
    'govctl evidence list --system loan-scorer --days 30',
    'govctl evidence list --type model_evaluation --all | cut -f1',
    'govctl evidence list --json | jq -r ".records[].record_id"',
  ]);
}

export async function run(options: EvidenceListOptions, deps: Factory): Promise<void> {
  const api = await deps.api();
  const out = deps.io.stdout;
  const query: EvidenceQuery = {};
  if (options.system !== undefined) query.system_name = options.system;
  if (options.type !== undefined) query.record_type = options.type;
  if (options.days !== undefined) query.days = options.days;
  if (options.since !== undefined) query.since = options.since;
  // --all is all time unless --days or --since narrows it: the service's 90-day default would
  // otherwise cut the listing short without a word.
  else if (options.all && options.days === undefined) query.since = ALL_TIME;
  if (options.limit !== undefined || options.all) query.limit = options.limit ?? MAX_PAGE;
  if (options.cursor !== undefined) query.cursor = options.cursor;
  const context = { now: deps.clock };

  if (!options.all) {
    const page = await api.listEvidence(query);
    if (options.json) return printJson(out, page);
    await printTable(out, EVIDENCE_COLUMNS, page.records, context);
    if (out.isTTY || deps.io.stderr.isTTY) {
      if (page.records.length === 0) await deps.note('no evidence records found');
      else if (page.next_cursor) await deps.note(`more records: add --all, or --cursor ${page.next_cursor}`);
    }
    return;
  }

  // --all: page by page. Piped and --json output is written as it comes (flat memory), starting
  // once the first page has arrived (a failing first request leaves stdout empty); a TTY table
  // needs every row to size its columns.
  let count = 0;
  const rows: EvidenceListItem[] = [];
  for await (const page of allPages(api, query)) {
    if (options.json) {
      const records = page.records.map((record) => stringifyJson(record)).join(',\n');
      await out.write(count === 0 ? `{"records":[${records ? `\n${records}` : ''}` : records ? `,\n${records}` : '');
    } else if (out.isTTY) rows.push(...page.records);
    else await printTable(out, EVIDENCE_COLUMNS, page.records, context);
    count += page.records.length;
  }
  if (options.json) await out.write(count > 0 ? '\n]}\n' : ']}\n');
  else if (out.isTTY) await printTable(out, EVIDENCE_COLUMNS, rows, context);
  if (deps.io.stderr.isTTY) await deps.note(count === 0 ? 'no evidence records found' : `${plural(count, 'record')}`);
}
