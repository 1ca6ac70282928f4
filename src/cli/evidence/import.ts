/**
 * `govctl evidence import <file|->`: stores many records from NDJSON or a JSON array through the
 * batch endpoint (POST grc/evidence/batch, docs/service.md), with one result line per record on
 * stdout, in input order (results.ts).
 *
 * Repeatable: each record carries an idempotency key derived from its content (client/idempotency.ts),
 * so running an import again, or resuming it, answers the records already stored with their first
 * result instead of storing them twice (`--no-idempotency` turns that off).
 *
 * Constant memory: NDJSON is read line by line (input.ts), and at most {@link IN_FLIGHT} batches
 * of {@link BATCH_RECORDS} records ({@link BATCH_BYTES} of JSON) are held at a time;
 * output is written with backpressure. A JSON array is one document and is read whole.
 *
 * When the service says wait (429), the progress line says so and the import waits as long as
 * told (abortably); Ctrl-C stops within the second, reports the records done and how to resume.
 *
 * A bad record (invalid JSON, invalid record, rejected by the service) is reported and the import
 * goes on unless `--fail-fast`; a failure of the whole run (401/403, 404 workspace, unreachable
 * service) stops it. Exit codes: results.ts `Tally.finish`.
 */
import { Command, Option } from 'commander';
import { CLIENT_SIG_ALGO, isPlainObject, isoNow, signClientSig, stringifyJson, validateRecord, type SigningKey } from '../../core/index.js';
import type { ServiceApi } from '../../client/api.js';
import { keyAndLength } from '../../client/idempotency.js';
import { addExamples, markWindsDown, markWrite, wholeNumber } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { openInput, readRecordStream, type StreamItem } from '../input.js';
import { startProgress, type Progress } from '../progress.js';
import { Tally, failedRequest, invalidRecord, type Outcome } from '../results.js';

/** Options of `evidence import`. */
export interface EvidenceImportOptions {
  file: string;
  dryRun: boolean;
  failFast: boolean;
  json: boolean;
  /** send derived idempotency keys (default true; `--no-idempotency`) */
  idempotency?: boolean;
  /** skip the input's first N records (they were imported by an interrupted run) */
  resumeFrom?: number;
  /** records per request (at most the service's 1000) */
  batchSize?: number;
}

/** Most records in one request: the service's batch limit (docs/service.md). */
export const MAX_BATCH_RECORDS = 1000;

/**
 * Records per request by default: half the service's limit. Measured on 100 000 records against
 * `govctl serve`, 500 peaked at 144 MB RSS and 1000 at 149–164 MB, at the same rate.
 */
export const BATCH_RECORDS = 500;

/** Most JSON bytes in one request: under the service's 8 MiB batch body limit, with room to spare. */
export const BATCH_BYTES = 6 * 1024 * 1024;

/** Batches in flight at once: one being stored while the next is read and sent. */
export const IN_FLIGHT = 2;

export function createEvidenceImportCommand(factory: Factory): Command {
  const command = new Command('import')
    .description('store many records from NDJSON (streamed) or a JSON array, in batches; one result line per record')
    .argument('<file|->', 'records: NDJSON (one record per line) or a JSON array; - reads stdin')
    .option('--dry-run', 'validate and show the controls each record would earn; store nothing')
    .option('--fail-fast', 'stop at the first record that fails')
    .option('--no-idempotency', 'send no idempotency keys: a record sent again is stored again')
    .addOption(
      new Option('--resume-from <n>', 'skip the first n records of the input (where an interrupted import stopped)').argParser(
        wholeNumber('--resume-from', { min: 0 }),
      ),
    )
    .addOption(
      new Option('--batch-size <n>', `records per request (default ${BATCH_RECORDS}, at most ${MAX_BATCH_RECORDS})`).argParser(
        wholeNumber('--batch-size', { min: 1, max: MAX_BATCH_RECORDS }),
      ),
    )
    .action(async (file: string, opts: { dryRun?: boolean; failFast?: boolean; idempotency?: boolean; resumeFrom?: number; batchSize?: number }) =>
      run(
        {
          file,
          dryRun: opts.dryRun === true,
          failFast: opts.failFast === true,
          json: factory.globals.json === true,
          idempotency: opts.idempotency !== false,
          ...(opts.resumeFrom !== undefined ? { resumeFrom: opts.resumeFrom } : {}),
          ...(opts.batchSize !== undefined ? { batchSize: opts.batchSize } : {}),
        },
        factory,
      ),
    );
  markWrite(command);
  markWindsDown(command);
  return addExamples(command, [
    'govctl evidence import records.ndjson > results.tsv',
    'govctl evidence import - --dry-run < records.json',
    'govctl evidence import records.ndjson --resume-from 52000',
    'govctl evidence import records.ndjson --json | jq -c "select(.status == \\"error\\")"',
  ]);
}

/** Everything a record needs besides itself. */
interface Context {
  key: SigningKey | undefined;
  workspaceId: string | undefined;
  systemName: string | undefined;
  idempotency: boolean;
  now: () => Date;
}

/** Members the service adds to a stored record (GET grc/evidence/{id}, the export), dropped on import. */
export const SERVICE_MEMBERS = ['record_id', 'source', 'signed', 'mapped_controls', 'received_at'] as const;

/** Room for `,"idempotency_key":"govctl-sha256-<64 hex>"` and the separator, in the byte budget. */
const KEY_MEMBER_BYTES = 120;

/** A record ready to send. */
interface Prepared {
  index: number;
  record: Record<string, unknown>;
  /** its JSON length, for the batch's byte budget */
  bytes: number;
}

/**
 * Checks, completes, signs and keys one record: `system_name` from `--system` and `occurred_at`
 * (now) when absent; signed with the configured key unless it arrives signed (by `evidence sign`);
 * then its idempotency key, derived from the record as sent.
 */
function prepare(item: StreamItem, context: Context): Prepared | Outcome {
  const { index } = item;
  if ('error' in item) return invalidRecord(index, 'invalid_json', `line ${item.line}: ${item.error.reason} (column ${item.error.column})`);
  if (!isPlainObject(item.value)) return invalidRecord(index, 'validation_error', 'the record must be a JSON object');
  const record = { ...item.value } as Record<string, unknown>;
  // A line of `evidence export` is a stored record: what the service added is not the record's,
  // and left on, it would make a round trip a different record (and a different key).
  for (const member of SERVICE_MEMBERS) delete record[member];
  if ((record.system_name === undefined || record.system_name === null) && context.systemName) record.system_name = context.systemName;
  if (record.occurred_at === undefined || record.occurred_at === null) record.occurred_at = isoNow(context.now());
  const { idempotency_key: givenKey, ...content } = record;
  const issues = validateRecord(content);
  if (issues.length > 0) {
    return invalidRecord(index, 'validation_error', issues.map((found) => `${found.path} ${found.message}`).join('; '), issues[0].path);
  }
  if (context.key && (record.client_sig === undefined || record.client_sig === null)) {
    record.client_sig = signClientSig(content, context.workspaceId!, context.key);
    record.client_sig_algo = CLIENT_SIG_ALGO;
  }
  if (!context.idempotency) {
    if (givenKey !== undefined) delete record.idempotency_key;
    return { index, record, bytes: stringifyJson(record).length + 1 };
  }
  // The key's canonical text gives the size too (canonical JSON is the compact form, as sent).
  const { key, length } = keyAndLength(record);
  record.idempotency_key = typeof givenKey === 'string' ? givenKey : key;
  return { index, record, bytes: length + KEY_MEMBER_BYTES };
}

/** One batch: the entries in input order (records to send and outcomes already known) and its reply. */
interface Group {
  /** in input order: the index of a record sent, or the outcome of one that was not */
  entries: (number | Outcome)[];
  /** the records to send; handed to the request when the batch is sealed, then dropped (memory) */
  chunk: Prepared[];
  bytes: number;
  /** the outcome per sent index; `aborted` when Ctrl-C cut the request off (nothing is reported for it) */
  sending?: Promise<Map<number, Outcome> | 'aborted'>;
}

/** How long the input may pause before the records gathered so far are sent without a full batch. */
export const IDLE_MS = 200;

const IDLE = Symbol('idle');

/**
 * The items of `source`, with {@link IDLE} in between when the next item takes longer than
 * `idleMs` to come (once per pause).
 */
async function* idleMarked<T>(source: AsyncIterable<T>, idleMs: number): AsyncGenerator<T | typeof IDLE> {
  const iterator = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = iterator.next();
      let timer: NodeJS.Timeout | undefined;
      const idle = new Promise<typeof IDLE>((resolve) => (timer = setTimeout(resolve, idleMs, IDLE)));
      let result = await Promise.race([next, idle]);
      clearTimeout(timer);
      if (result === IDLE) {
        yield IDLE;
        result = await next;
      }
      if (result.done) return;
      yield result.value;
    }
  } finally {
    await iterator.return?.();
  }
}

/** What the progress line shows while the import waits on the service. */
function waitingText(waitMs: number): string {
  return ` | waiting ${Math.ceil(waitMs / 1000)} s (rate limited)`;
}

/** Sends one batch; each record's line comes from its item of the reply's `results`. */
async function sendChunk(
  api: ServiceApi,
  records: Record<string, unknown>[],
  indexes: number[],
  options: { dryRun: boolean; idempotent: boolean; deps: Factory; onWait: (ms: number) => void },
): Promise<Map<number, Outcome> | 'aborted'> {
  const outcomes = new Map<number, Outcome>();
  let reply;
  try {
    reply = await api.postEvidenceBatch(records, {
      dryRun: options.dryRun,
      idempotent: options.idempotent,
      signal: options.deps.signal,
      // A bulk import waits as often as the service asks: the budget refills every minute.
      rateLimitRetries: Number.POSITIVE_INFINITY,
      onWait: (ms, why) => {
        if (why === 'rate_limited') options.onWait(ms);
      },
    });
  } catch (error) {
    if (options.deps.signal.aborted) return 'aborted';
    for (const index of indexes) outcomes.set(index, failedRequest(index, error));
    return outcomes;
  }
  indexes.forEach((index, i) => {
    const entry = { index };
    const item = reply.results?.[i];
    if (item && item.status === 'accepted') {
      const json: Record<string, unknown> = {
        record_id: item.record_id,
        record_type: item.record_type,
        mapped_controls: item.mapped_controls ?? [],
        detail: options.dryRun ? 'dry_run' : 'ok',
      };
      if (item.replayed === true) json.replayed = true;
      outcomes.set(entry.index, { index: entry.index, status: 'ok', tsv: [String(item.record_id ?? ''), (item.mapped_controls ?? []).join(',')], json });
    } else if (!item) outcomes.set(entry.index, invalidRecord(entry.index, 'validation_error', 'the service gave no result for this record'));
    else outcomes.set(entry.index, invalidRecord(entry.index, 'validation_error', item.message ?? `rejected (${item.status})`, item.field));
  });
  return outcomes;
}

export async function run(options: EvidenceImportOptions, deps: Factory): Promise<void> {
  const settings = await deps.settings();
  const input = await openInput(options.file, deps, 'the records');
  deps.requestSource = 'import';
  const api = await deps.api();
  const key = await deps.signingKey();
  const idempotency = options.idempotency !== false && !options.dryRun;
  const context: Context = {
    key,
    workspaceId: key ? await deps.workspaceId() : undefined,
    systemName: settings.systemName,
    idempotency,
    now: deps.clock,
  };
  const resumeFrom = options.resumeFrom ?? 0;
  const batchSize = options.batchSize ?? BATCH_RECORDS;
  const tally = new Tally(deps, options);
  const started = Date.now();
  const progress: Progress = await startProgress(deps, {
    label: options.dryRun ? 'checking' : 'importing',
    total: input.size,
    detail: '{records} records, {failed} failed, {rate} records/s{status}',
    fields: { records: 0, rate: 0, failed: 0, status: '' },
    // Result lines on the same terminal would tear the bar apart; there they are progress enough.
    when: !deps.io.stdout.isTTY,
  });
  let bytes = 0;
  let status = '';
  const show = () => {
    const seconds = (Date.now() - started) / 1000;
    progress.update(bytes, { records: tally.done, rate: seconds > 0 ? Math.round(tally.done / seconds) : 0, failed: tally.failed, status });
  };
  const onWait = (ms: number) => {
    status = waitingText(ms);
    show();
    // Without a progress line, one note per wait: a silent pause reads as a hang.
    if (!deps.io.stderr.isTTY || deps.io.stdout.isTTY) void deps.note(`waiting ${Math.ceil(ms / 1000)} s (rate limited)`).catch(() => undefined);
  };

  const inFlight: Group[] = [];
  /** the input index after the last record reported: where a resumed run starts */
  let resumeAt = resumeFrom;
  let interrupted = false;
  let current: Group = { entries: [], chunk: [], bytes: 0 };

  const seal = () => {
    if (current.entries.length === 0) return;
    const group = current;
    const records = group.chunk.map((entry) => entry.record);
    const indexes = group.chunk.map((entry) => entry.index);
    group.chunk = [];
    group.sending =
      records.length > 0 ? sendChunk(api, records, indexes, { dryRun: options.dryRun, idempotent: idempotency, deps, onWait }) : Promise.resolve(new Map());
    inFlight.push(group);
    current = { entries: [], chunk: [], bytes: 0 };
  };
  /** Reports the oldest batch's lines, in input order. */
  const drainOne = async () => {
    const group = inFlight.shift()!;
    const outcomes = await group.sending!;
    if (outcomes === 'aborted' || interrupted) {
      interrupted = true;
      return;
    }
    status = '';
    for (const entry of group.entries) {
      const outcome = typeof entry === 'number' ? outcomes.get(entry)! : entry;
      await tally.add(outcome);
      resumeAt = outcome.index + 1;
    }
    show();
  };

  try {
    for await (const item of idleMarked(
      readRecordStream(input, (n) => (bytes = n), deps.signal),
      IDLE_MS,
    )) {
      if (tally.stopped || interrupted) break;
      if (item === IDLE) {
        // The input has paused (a pipe from a live producer): send what is gathered and report it now.
        seal();
        while (inFlight.length > 0 && !interrupted) await drainOne();
        continue;
      }
      if (item.index < resumeFrom) continue;
      const prepared = prepare(item, context);
      if ('status' in prepared) current.entries.push(prepared);
      else {
        if (current.chunk.length > 0 && current.bytes + prepared.bytes > BATCH_BYTES) {
          seal();
          while (inFlight.length >= IN_FLIGHT && !interrupted) await drainOne();
        }
        current.entries.push(prepared.index);
        current.chunk.push(prepared);
        current.bytes += prepared.bytes;
      }
      if (current.chunk.length >= batchSize || current.entries.length >= batchSize * 4) {
        seal();
        while (inFlight.length >= IN_FLIGHT && !interrupted) await drainOne();
      }
    }
    if (!tally.stopped && !deps.signal.aborted) seal();
    while (inFlight.length > 0 && !interrupted) await drainOne();
  } finally {
    progress.stop();
    (input.stream as { destroy?: () => void }).destroy?.();
  }
  const resume =
    options.file === '-'
      ? `to resume, send the same input again with --resume-from ${resumeAt}${idempotency ? ' (or send it all again: records already stored are not stored twice)' : ''}`
      : `to resume: govctl evidence import ${options.file} --resume-from ${resumeAt}${idempotency ? ' (or run it again: records already stored are not stored twice)' : ''}`;
  await tally.finish({
    noun: 'record',
    verb: options.dryRun ? 'checked' : 'imported',
    seconds: (Date.now() - started) / 1000,
    dryRun: options.dryRun,
    resumeHint: resume,
  });
}
