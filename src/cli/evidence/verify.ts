/**
 * `govctl evidence verify [file|-] --workspace WS`: offline, checks each record's `client_sig`
 * with the configured signing key (docs/wire-format.md, "client_sig"). `--remote` checks the records stored in the
 * service instead, all time unless `--days` narrows it: it reads each in full (payload and
 * signature as stored) from the export extension, a page at a time, and verifies it, so a record
 * changed after it was signed is found. Exit 2 when any does not verify.
 */
import { Command, Option } from 'commander';
import { DAY_MS, RECORD_TYPES } from '../../core/index.js';
import { readJson, verifyEvidenceSignature } from '../../client/verify/index.js';
import { addExamples, wholeNumber } from '../command-kit.js';
import { InterruptedError, UsageError } from '../errors.js';
import type { Factory } from '../factory.js';
import { readJsonDocuments } from '../input.js';
import { startProgress } from '../progress.js';
import { plural } from '../render.js';
import { reportVerification, type VerifyResult } from '../verify-report.js';
import { exportPages, exportQuery } from './export.js';

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

export function createEvidenceVerifyCommand(factory: Factory): Command {
  const command = new Command('verify')
    .description('check the client_sig of each record given (offline), or of the stored records (--remote); exit 2 if any does not verify')
    .argument('[file|-]', 'records: one object, an array, or NDJSON (default: stdin)')
    .option('--remote', 'verify the records stored in the service, all time unless --days (read in full from the export)')
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

export async function run(options: EvidenceVerifyOptions, deps: Factory): Promise<void> {
  if (!options.remote) {
    if (options.type !== undefined || options.days !== undefined)
      throw new UsageError('--type and --days go with --remote', { hint: 'add --remote to verify stored records' });
    const workspaceId = await deps.offlineWorkspaceId('evidence verify');
    const key = await deps.requireSigningKey('evidence verify');
    const documents = await readJsonDocuments(options.file, deps, 'the records');
    const results = documents.map((document, index) => verifyEvidenceSignature(document, index, workspaceId, key));
    return reportVerification(deps, results, { kind: 'evidence', json: options.json });
  }
  if (options.file !== undefined) throw new UsageError('--remote verifies stored records and takes no file', { hint: 'drop the file, or drop --remote' });
  const key = await deps.requireSigningKey('evidence verify --remote');
  const api = await deps.api();
  const workspaceId = await deps.workspaceId();

  // Every stored record, all time unless --days narrows it, read in full from the export a page at
  // a time (no request per record) and checked as it comes.
  const since = options.days !== undefined ? new Date(deps.clock().getTime() - options.days * DAY_MS).toISOString() : undefined;
  const query = exportQuery({
    ...(options.system !== undefined ? { system: options.system } : {}),
    ...(options.type !== undefined ? { type: options.type } : {}),
    ...(since !== undefined ? { since } : {}),
  });
  const progress = await startProgress(deps, {
    label: 'verifying',
    total: undefined,
    detail: '{records} records checked, {failed} failed',
    fields: { records: 0, failed: 0 },
  });
  const results: VerifyResult[] = [];
  let failed = 0;
  try {
    for await (const page of exportPages(api, query, deps)) {
      for (let start = 0; start < page.text.length;) {
        const end = page.text.indexOf('\n', start);
        const line = page.text.slice(start, end === -1 ? undefined : end);
        start = end === -1 ? page.text.length : end + 1;
        if (line === '') continue;
        // each stored record read strictly: a line that is not JSON the service writes does not verify
        const read = readJson(line);
        const result =
          'problem' in read
            ? { index: results.length, status: 'invalid' as const, reason: `not a record the service writes: ${read.problem}` }
            : verifyEvidenceSignature(read.value, results.length, workspaceId, key);
        if (result.status !== 'valid') failed++;
        results.push(result);
      }
      progress.update(0, { records: results.length, failed });
      if (deps.signal.aborted) break;
    }
  } catch (error) {
    if (!deps.signal.aborted) throw error;
  } finally {
    progress.stop();
  }
  if (deps.signal.aborted) throw new InterruptedError();
  // On failure the error says how many of how many; on success this line does.
  await reportVerification(deps, results, { kind: 'evidence', json: options.json, remote: true });
  await deps.note(`checked ${plural(results.length, 'stored record')} (${since === undefined ? 'all time' : `occurred since ${since}`})`);
}
