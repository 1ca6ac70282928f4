/**
 * `govctl evidence import <file|->`: stores many records (POST grc/evidence per record) from NDJSON
 * or a JSON array, with one result line per record on stdout, in input order (results.ts).
 *
 * Constant memory: NDJSON is read line by line (input.ts) and at most {@link IN_FLIGHT} records are
 * held, each a request in flight on the client's one keep-alive pool; output is written with
 * backpressure. A JSON array is one document and is read whole.
 *
 * A bad record (invalid JSON, invalid record, 400/422, 5xx, 429 after the retry) is reported and the
 * import goes on unless `--fail-fast`; a failure of the whole run (401/403, 404 workspace,
 * unreachable service) stops it. Exit codes: results.ts `Tally.finish`.
 */
import { Command } from 'commander';
import { CLIENT_SIG_ALGO, isPlainObject, isoNow, signClientSig, validateRecord, type SigningKey } from '../../core/index.js';
import type { ServiceApi } from '../../client/api.js';
import { addExamples, markWindsDown, markWrite } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { openInput, readRecordStream, type StreamItem } from '../input.js';
import { startProgress } from '../progress.js';
import { Tally, failedRequest, invalidRecord, type Outcome } from '../results.js';

/** Options of `evidence import`. */
export interface EvidenceImportOptions {
  file: string;
  dryRun: boolean;
  failFast: boolean;
  json: boolean;
}

/** Requests in flight at once. */
export const IN_FLIGHT = 16;

export function createEvidenceImportCommand(factory: Factory): Command {
  const command = new Command('import')
    .description('store many records from NDJSON (streamed) or a JSON array; one result line per record')
    .argument('<file|->', 'records: NDJSON (one record per line) or a JSON array; - reads stdin')
    .option('--dry-run', 'validate and show the controls each record would earn; store nothing')
    .option('--fail-fast', 'stop at the first record that fails')
    .action(async (file: string, opts: { dryRun?: boolean; failFast?: boolean }) =>
      run({ file, dryRun: opts.dryRun === true, failFast: opts.failFast === true, json: factory.globals.json === true }, factory),
    );
  markWrite(command);
  markWindsDown(command);
  return addExamples(command, [
    'govctl evidence import records.ndjson > results.tsv',
    'govctl evidence import - --dry-run < records.json',
    'govctl evidence import records.ndjson --json | jq -c "select(.status == \\"error\\")"',
  ]);
}

/** Everything a record needs besides itself. */
interface Context {
  api: ServiceApi;
  key: SigningKey | undefined;
  workspaceId: string | undefined;
  systemName: string | undefined;
  dryRun: boolean;
  now: () => Date;
}

/**
 * Checks, completes, signs and sends one record: `system_name` from `--system` and `occurred_at`
 * (now) when absent; signed with the configured key unless it arrives signed (by `evidence sign`).
 */
async function importOne(item: StreamItem, context: Context): Promise<Outcome> {
  const { index } = item;
  if ('error' in item) return invalidRecord(index, 'invalid_json', `line ${item.line}: ${item.error.reason} (column ${item.error.column})`);
  if (!isPlainObject(item.value)) return invalidRecord(index, 'validation_error', 'the record must be a JSON object');
  const record = { ...item.value } as Record<string, unknown>;
  if ((record.system_name === undefined || record.system_name === null) && context.systemName) record.system_name = context.systemName;
  if (record.occurred_at === undefined || record.occurred_at === null) record.occurred_at = isoNow(context.now());
  const issues = validateRecord(record);
  if (issues.length > 0) {
    return invalidRecord(index, 'validation_error', issues.map((found) => `${found.path} ${found.message}`).join('; '), issues[0]!.path);
  }
  if (context.key && (record.client_sig === undefined || record.client_sig === null)) {
    record.client_sig = signClientSig(record, context.workspaceId!, context.key);
    record.client_sig_algo = CLIENT_SIG_ALGO;
  }
  try {
    const result = await context.api.postEvidence(record, { dryRun: context.dryRun });
    const controls = result.mapped_controls ?? [];
    return { index, status: 'ok', tsv: [result.record_id, controls.join(',')], json: { ...result } };
  } catch (error) {
    return failedRequest(index, error);
  }
}

export async function run(options: EvidenceImportOptions, deps: Factory): Promise<void> {
  const settings = await deps.settings();
  const input = await openInput(options.file, deps, 'the records');
  deps.requestSource = 'import';
  const api = await deps.api();
  const key = await deps.signingKey();
  const context: Context = {
    api,
    key,
    workspaceId: key ? await deps.workspaceId() : undefined,
    systemName: settings.systemName,
    dryRun: options.dryRun,
    now: deps.clock,
  };
  const tally = new Tally(deps, options);
  const started = Date.now();
  const progress = await startProgress(deps, {
    label: options.dryRun ? 'checking' : 'importing',
    total: input.size,
    detail: '{records} records, {failed} failed',
    fields: { records: 0, failed: 0 },
    // Result lines on the same terminal would tear the bar apart; there they are progress enough.
    when: !deps.io.stdout.isTTY,
  });
  let bytes = 0;

  // Records go into `window` as they are read (at most IN_FLIGHT, each a request in flight); a
  // writer takes them out in input order as each finishes, so results appear as they come.
  const window: Promise<Outcome>[] = [];
  let wakeWriter: (() => void) | undefined;
  let wakeReader: (() => void) | undefined;
  let readingDone = false;
  const writer = (async () => {
    for (;;) {
      if (window.length === 0) {
        if (readingDone) return;
        await new Promise<void>((resolve) => (wakeWriter = resolve));
        continue;
      }
      const outcome = await window[0]!;
      window.shift();
      wakeReader?.();
      await tally.add(outcome);
      progress.update(bytes, { records: tally.done, failed: tally.failed });
    }
  })();
  // If the writer fails (stdout closed), the reader must not wait for room that never comes.
  let writerFailed = false;
  writer.catch(() => {
    writerFailed = true;
    wakeReader?.();
  });
  try {
    for await (const item of readRecordStream(input, (n) => (bytes = n), deps.signal)) {
      if (tally.stopped || writerFailed) break;
      while (window.length >= IN_FLIGHT && !writerFailed) await new Promise<void>((resolve) => (wakeReader = resolve));
      window.push(importOne(item, context));
      wakeWriter?.();
    }
  } finally {
    // Whatever ends the loop, the records already sent are reported.
    readingDone = true;
    wakeWriter?.();
    await writer.finally(() => {
      progress.stop();
      (input.stream as { destroy?: () => void }).destroy?.();
    });
  }
  await tally.finish({ noun: 'record', verb: options.dryRun ? 'checked' : 'imported', seconds: (Date.now() - started) / 1000, dryRun: options.dryRun });
}
