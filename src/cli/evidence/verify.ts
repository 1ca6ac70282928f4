/**
 * `govctl evidence verify [file|-] --workspace WS`: offline, checks each record's `client_sig`
 * with the configured signing key (spec §5.1). `--remote` checks the records stored in the
 * service instead: it lists them, fetches each whole (payload and signature as stored) and
 * verifies it, so a record changed after it was signed is found. Exit 2 when any does not verify.
 */
import { Command, Option } from 'commander';
import { RECORD_TYPES, isPlainObject, verifyClientSig, type SigningKey } from '../../core/index.js';
import type { EvidenceListItem, EvidenceQuery } from '../../client/wire-types.js';
import { NotFoundError } from '../../client/errors.js';
import { addExamples, wholeNumber } from '../command-kit.js';
import { InterruptedError, UsageError } from '../errors.js';
import type { Factory } from '../factory.js';
import { readJsonDocuments } from '../input.js';
import { reportVerification, type VerifyResult } from '../verify-report.js';
import { MAX_PAGE, allPages } from './list.js';

/** Options of `evidence verify`. */
export interface EvidenceVerifyOptions {
  file?: string;
  remote: boolean;
  /** `--remote` filters */
  system?: string;
  type?: string;
  days?: number;
  json: boolean;
}

/** Records fetched at once by `--remote`. */
const REMOTE_CONCURRENCY = 8;

export function createEvidenceVerifyCommand(factory: Factory): Command {
  const command = new Command('verify')
    .description('check the client_sig of each record given (offline), or of the stored records (--remote); exit 2 if any does not verify')
    .argument('[file|-]', 'records: one object, an array, or NDJSON (default: stdin)')
    .option('--remote', 'verify the records stored in the service (list, then fetch each)')
    .addOption(new Option('--type <record-type>', '--remote: only this record type').choices(RECORD_TYPES))
    .addOption(new Option('--days <n>', '--remote: look back this many days').argParser(wholeNumber('--days', { min: 1 })))
    .action(async (file: string | undefined, opts: { remote?: boolean; type?: string; days?: number }) => {
      const settings = await factory.settings();
      await run(
        {
          file,
          remote: opts.remote === true,
          system: settings.sources.systemName?.kind === 'flag' ? settings.systemName : undefined,
          type: opts.type,
          days: opts.days,
          json: factory.globals.json === true,
        },
        factory,
      );
    });
  return addExamples(command, [
    'govctl evidence verify signed.ndjson --workspace ws_123',
    'govctl evidence sign r.json --workspace ws_123 | govctl evidence verify - --workspace ws_123',
    'govctl evidence verify --remote --system loan-scorer --days 30',
  ]);
}

/** Verifies one record; anything that is not a signed record object does not verify. */
export function verifyOne(document: unknown, index: number, workspaceId: string, key: SigningKey): VerifyResult {
  if (!isPlainObject(document)) return { index, status: 'invalid', reason: 'not a JSON object' };
  const result: VerifyResult = { index, status: 'valid' };
  if (typeof document.record_type === 'string') result.record_type = document.record_type;
  if (typeof document.system_name === 'string') result.system_name = document.system_name;
  if (typeof document.record_id === 'string') result.record_id = document.record_id;
  if (document.client_sig === undefined || document.client_sig === null) result.status = 'unsigned';
  else if (!verifyClientSig(document, workspaceId, key)) result.status = 'invalid';
  return result;
}

export async function run(options: EvidenceVerifyOptions, deps: Factory): Promise<void> {
  if (!options.remote) {
    if (options.type !== undefined || options.days !== undefined) throw new UsageError('--type and --days go with --remote', { hint: 'add --remote to verify stored records' });
    const workspaceId = await deps.offlineWorkspaceId('evidence verify');
    const key = await deps.requireSigningKey('evidence verify');
    const documents = await readJsonDocuments(options.file, deps, 'the records');
    const results = documents.map((document, index) => verifyOne(document, index, workspaceId, key));
    return reportVerification(deps, results, { kind: 'evidence', json: options.json });
  }
  if (options.file !== undefined) throw new UsageError('--remote verifies stored records and takes no file', { hint: 'drop the file, or drop --remote' });
  const key = await deps.requireSigningKey('evidence verify --remote');
  const api = await deps.api();
  const workspaceId = await deps.workspaceId();

  const query: EvidenceQuery = { limit: MAX_PAGE };
  if (options.system !== undefined) query.system_name = options.system;
  if (options.type !== undefined) query.record_type = options.type;
  if (options.days !== undefined) query.days = options.days;
  const listed: EvidenceListItem[] = [];
  for await (const page of allPages(api, query)) listed.push(...page.records);

  const results: VerifyResult[] = new Array(listed.length);
  let next = 0;
  const worker = async () => {
    while (next < listed.length) {
      if (deps.signal.aborted) return;
      const index = next++;
      const item = listed[index]!;
      try {
        const stored = await api.getEvidence(item.record_id);
        results[index] = verifyOne(stored, index, workspaceId, key);
      } catch (error) {
        // Listed a moment ago, gone now: report it rather than fail the whole check.
        if (!(error instanceof NotFoundError)) throw error;
        results[index] = { index, status: 'invalid', record_type: item.record_type, system_name: item.system_name, record_id: item.record_id, reason: 'no longer stored' };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(REMOTE_CONCURRENCY, listed.length) }, worker));
  if (deps.signal.aborted) throw new InterruptedError();
  await reportVerification(deps, results, { kind: 'evidence', json: options.json, remote: true });
}
