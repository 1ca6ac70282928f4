/**
 * `govctl attest list`: stored attestations, newest first (GET attestations, the service's
 * extension), with each one's trust tier, signature form and key fingerprint. `--all` follows
 * `next_cursor` past the 200-attestation page limit.
 */
import { Command, Option } from 'commander';
import { stringifyJson } from '../../core/index.js';
import type { ServiceApi } from '../../client/api.js';
import type { AttestationList, AttestationQuery, StoredAttestation } from '../../client/wire-types.js';
import { addExamples, wholeNumber } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { plural, printJson, printTable, type Column } from '../render.js';

/** Options of `attest list`. */
export interface AttestListOptions {
  /** only the `--system` flag filters (an environment default does not) */
  system?: string;
  tool?: string;
  days?: number;
  /** page size; with `--all` each page's (default 200) */
  limit?: number;
  all: boolean;
  cursor?: string;
  json: boolean;
}

/** The largest page the service gives. */
export const MAX_PAGE = 200;

/** Columns: the piped order is the documented TSV format (docs/cli.md). */
export const ATTESTATION_COLUMNS: readonly Column<StoredAttestation>[] = [
  { header: 'attestation id', value: (a) => a.attestation_id, shrink: 'id' },
  { header: 'system', value: (a) => a.system_name },
  { header: 'tool', value: (a) => a.tool_name },
  { header: 'executed', value: (a) => a.executed_at, kind: 'time' },
  {
    header: 'tier',
    value: (a) => a.trust_tier,
    style: (text, out, a) => (a.trust_tier === 'witnessed' ? out.color.green(text) : out.color.dim(text)),
    optional: true,
  },
  { header: 'form', value: (a) => a.witness_form ?? '', optional: true },
  { header: 'key fingerprint', value: (a) => a.key_fingerprint ?? '', shrink: 'middle', optional: true },
];

/** Every page of a listing from `query.cursor` on, following `next_cursor`. */
export async function* allAttestationPages(api: ServiceApi, query: AttestationQuery): AsyncGenerator<AttestationList> {
  for (let cursor = query.cursor; ;) {
    const page = await api.listAttestations(cursor === undefined ? query : { ...query, cursor });
    yield page;
    if (!page.next_cursor || page.attestations.length === 0) return;
    cursor = page.next_cursor;
  }
}

/** `--tool`, `--days` (shared with `attest verify --remote`). */
export const toolOption = () => new Option('--tool <name>', 'only this tool');
export const daysOption = () => new Option('--days <n>', 'look back this many days (service default 90)').argParser(wholeNumber('--days', { min: 1 }));

export function createAttestListCommand(factory: Factory): Command {
  const command = new Command('list')
    .description('list stored attestations, newest first, with trust tier, signature form and key fingerprint')
    .addOption(toolOption())
    .addOption(daysOption())
    .addOption(
      new Option('--limit <n>', `attestations per page, at most ${MAX_PAGE} (service default 50)`).argParser(wholeNumber('--limit', { min: 1, max: MAX_PAGE })),
    )
    .option('--all', 'every page, following next_cursor')
    .option('--cursor <cursor>', 'start at this page (a next_cursor from a previous --json listing)')
    .action(async (opts: { tool?: string; days?: number; limit?: number; all?: boolean; cursor?: string }) => {
      const settings = await factory.settings();
      await run(
        {
          system: settings.sources.systemName?.kind === 'flag' ? settings.systemName : undefined,
          tool: opts.tool,
          days: opts.days,
          limit: opts.limit,
          all: opts.all === true,
          cursor: opts.cursor,
          json: factory.globals.json === true,
        },
        factory,
      );
    });
  command.addHelpText(
    'after',
    '\nPiped, one line per attestation: attestation_id, system, tool, executed_at, trust tier, form, key fingerprint.\n--json prints {attestations: [...], next_cursor}, each with its record as stored and signed_text.\n',
  );
  return addExamples(command, [
    'govctl attest list --system loan-scorer --tool classify --limit 20',
    'govctl attest list --all | cut -f1',
    'govctl attest list --json | jq -r ".attestations[].signed_text"',
  ]);
}

export async function run(options: AttestListOptions, deps: Factory): Promise<void> {
  const api = await deps.api();
  const out = deps.io.stdout;
  const query: AttestationQuery = {};
  if (options.system !== undefined) query.system_name = options.system;
  if (options.tool !== undefined) query.tool_name = options.tool;
  if (options.days !== undefined) query.days = options.days;
  if (options.limit !== undefined || options.all) query.limit = options.limit ?? MAX_PAGE;
  if (options.cursor !== undefined) query.cursor = options.cursor;
  const context = { now: deps.clock };

  if (!options.all) {
    const page = await api.listAttestations(query);
    if (options.json) return printJson(out, page);
    await printTable(out, ATTESTATION_COLUMNS, page.attestations, context);
    if (out.isTTY || deps.io.stderr.isTTY) {
      if (page.attestations.length === 0) await deps.note('no attestations found');
      else if (page.next_cursor) await deps.note(`more attestations: add --all, or --cursor ${page.next_cursor}`);
    }
    return;
  }

  // --all: as `evidence list --all`: piped and --json output written page by page; a TTY table
  // needs every row to size its columns.
  let count = 0;
  const rows: StoredAttestation[] = [];
  for await (const page of allAttestationPages(api, query)) {
    if (options.json) {
      const items = page.attestations.map((item) => stringifyJson(item)).join(',\n');
      await out.write(count === 0 ? `{"attestations":[${items ? `\n${items}` : ''}` : items ? `,\n${items}` : '');
    } else if (out.isTTY) rows.push(...page.attestations);
    else await printTable(out, ATTESTATION_COLUMNS, page.attestations, context);
    count += page.attestations.length;
  }
  if (options.json) await out.write(count > 0 ? '\n]}\n' : ']}\n');
  else if (out.isTTY) await printTable(out, ATTESTATION_COLUMNS, rows, context);
  if (deps.io.stderr.isTTY) await deps.note(count === 0 ? 'no attestations found' : `${plural(count, 'attestation')}`);
}
