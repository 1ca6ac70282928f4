/**
 * `govctl attest batch <file|->`: pushes many attestations (POST attestations/batch, docs/service.md "POST …/attestations/batch") in
 * chunks of the batch size (default 100, the client library's, docs/library.md "Settings"), one result line per
 * record in input order (results.ts). Each line of NDJSON is an attestation record as sent (wire
 * names: `tool_name`, `input_hash`, …) or the client library's input (`toolName`, `inputHash`, …).
 * Missing `system_name`, `agent_name`, `executed_at` and `schema_version` are filled as the client
 * library fills them; records are signed with the configured key unless they arrive signed.
 *
 * On Ctrl-C the chunk being gathered is sent before the run ends (docs/cli.md: a batch that the
 * process is about to lose is flushed before the CLI exits).
 */
import { Command, Option } from 'commander';
import { SCHEMA_VERSION, buildAttestation, isPlainObject, isoNow, signWitness, validateAttestation, type SigningKey } from '../../core/index.js';
import type { ServiceApi } from '../../client/api.js';
import { withIdempotencyKey } from '../../client/idempotency.js';
import { addExamples, markWindsDown, markWrite, wholeNumber } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { openInput, readRecordStream, type StreamItem } from '../input.js';
import { startProgress } from '../progress.js';
import { Tally, failedRequest, invalidRecord, type Outcome } from '../results.js';

/** Options of `attest batch`. */
export interface AttestBatchOptions {
  file: string;
  batchSize: number;
  failFast: boolean;
  json: boolean;
  /** send idempotency keys derived from each attestation (default true; `--no-idempotency`) */
  idempotency?: boolean;
}

/** The client library's batch size (docs/library.md "Settings"). */
export const DEFAULT_BATCH_SIZE = 100;

export function createAttestBatchCommand(factory: Factory): Command {
  const command = new Command('batch')
    .description('push many attestations from NDJSON, in chunks through the batch endpoint; one result line per record')
    .argument('<file|->', "attestations, one JSON object per line (records as sent, or the client library's inputs); - reads stdin")
    .addOption(new Option('--batch-size <n>', 'records per request').argParser(wholeNumber('--batch-size', { min: 1, max: 1000 })).default(DEFAULT_BATCH_SIZE))
    .option('--fail-fast', 'stop after the first chunk with a failure')
    .option('--no-idempotency', 'send no idempotency keys: an attestation sent again is stored again')
    .action(async (file: string, opts: { batchSize: number; failFast?: boolean; idempotency?: boolean }) =>
      run(
        { file, batchSize: opts.batchSize, failFast: opts.failFast === true, json: factory.globals.json === true, idempotency: opts.idempotency !== false },
        factory,
      ),
    );
  markWrite(command);
  markWindsDown(command);
  return addExamples(command, [
    'govctl attest batch attestations.ndjson --system loan-scorer',
    'my-agent --emit-attestations | govctl attest batch - --batch-size 50 --json',
  ]);
}

interface Context {
  key: SigningKey | undefined;
  workspaceId: string | undefined;
  systemName: string | undefined;
  agentName: string | undefined;
  idempotency: boolean;
  now: () => Date;
}

/** A record ready to send, or the outcome that says why it is not. */
function prepare(item: StreamItem, context: Context): { index: number; record: Record<string, unknown> } | Outcome {
  const { index } = item;
  if ('error' in item) return invalidRecord(index, 'invalid_json', `line ${item.line}: ${item.error.reason} (column ${item.error.column})`);
  if (!isPlainObject(item.value)) return invalidRecord(index, 'validation_error', 'the attestation must be a JSON object');
  const value = item.value as Record<string, unknown>;
  let record: Record<string, unknown>;
  if (value.tool_name === undefined && typeof value.toolName === 'string') {
    // The client library's input form.
    const input = value as {
      systemName?: string;
      agentName?: string;
      toolName: string;
      inputHash?: string;
      outputHash?: string;
      executedAt?: string;
      modelId?: string;
      authorisedBy?: { identity: string; role?: string; sessionId?: string };
    };
    record = buildAttestation(
      {
        systemName: input.systemName ?? context.systemName ?? '',
        agentName: input.agentName ?? context.agentName,
        toolName: input.toolName,
        inputHash: input.inputHash ?? '',
        outputHash: input.outputHash ?? '',
        executedAt: input.executedAt,
        modelId: input.modelId,
        authorisedBy: input.authorisedBy,
      },
      context.now,
    ) as unknown as Record<string, unknown>;
    if (record.system_name === '') delete record.system_name;
    if (record.agent_name === '') delete record.agent_name;
    if (record.input_hash === '') delete record.input_hash;
    if (record.output_hash === '') delete record.output_hash;
  } else {
    record = { ...value };
    if (record.system_name === undefined && context.systemName) record.system_name = context.systemName;
    if (record.agent_name === undefined && (context.agentName ?? record.system_name) !== undefined) record.agent_name = context.agentName ?? record.system_name;
    if (record.schema_version === undefined) record.schema_version = SCHEMA_VERSION;
    if (record.executed_at === undefined) record.executed_at = isoNow(context.now());
  }
  // A key given in the input is not part of the attestation: kept aside, sent as the item's key.
  const givenKey = typeof record.idempotency_key === 'string' ? record.idempotency_key : undefined;
  delete record.idempotency_key;
  const issues = validateAttestation(record);
  if (issues.length > 0) return invalidRecord(index, 'validation_error', issues.map((found) => `${found.path} ${found.message}`).join('; '), issues[0].path);
  if (context.key && (record.witness_sig === undefined || record.witness_sig === null))
    Object.assign(record, signWitness(record, context.workspaceId!, context.key));
  // The key of the attestation as sent (signature included): a re-run or a retried request is
  // answered with the first result instead of storing the attestation again.
  if (givenKey !== undefined) return { index, record: { ...record, idempotency_key: givenKey } };
  return { index, record: context.idempotency ? withIdempotencyKey(record) : record };
}

/** Sends one chunk; each record's line comes from its item of the reply's `results`. */
async function sendChunk(api: ServiceApi, chunk: { index: number; record: Record<string, unknown> }[], idempotent: boolean): Promise<Outcome[]> {
  let reply;
  try {
    reply = await api.postAttestationBatch(
      chunk.map((entry) => entry.record),
      { idempotent },
    );
  } catch (error) {
    return chunk.map((entry) => failedRequest(entry.index, error));
  }
  return chunk.map((entry, i): Outcome => {
    const item = reply.results?.[i];
    if (item && item.status === 'accepted') {
      const json: Record<string, unknown> = { ...item };
      delete json.status;
      return { index: entry.index, status: 'ok', tsv: [String(item.attestation_id ?? ''), String(item.trust_tier ?? '')], json };
    }
    if (!item) return invalidRecord(entry.index, 'validation_error', 'the service gave no result for this record');
    return invalidRecord(entry.index, (item.error as 'validation_error') ?? 'validation_error', item.message ?? `rejected (${item.status})`, item.field);
  });
}

export async function run(options: AttestBatchOptions, deps: Factory): Promise<void> {
  const settings = await deps.settings();
  const input = await openInput(options.file, deps, 'the attestations');
  const api = await deps.api();
  const key = await deps.signingKey();
  const context: Context = {
    key,
    workspaceId: key ? await deps.workspaceId() : undefined,
    systemName: settings.systemName,
    agentName: settings.agentName,
    idempotency: options.idempotency !== false,
    now: deps.clock,
  };
  const tally = new Tally(deps, options);
  const started = Date.now();
  const progress = await startProgress(deps, {
    label: 'attesting',
    total: input.size,
    detail: '{records} records, {failed} failed',
    fields: { records: 0, failed: 0 },
    when: !deps.io.stdout.isTTY,
  });
  let bytes = 0;
  // Lines wait here until the chunk they follow is sent, so that output keeps input order.
  let pending: (Outcome | { index: number; record: Record<string, unknown> })[] = [];
  let chunk: { index: number; record: Record<string, unknown> }[] = [];

  const flush = async () => {
    const sent = chunk.length > 0 ? await sendChunk(api, chunk, context.idempotency) : [];
    const byIndex = new Map(sent.map((outcome) => [outcome.index, outcome]));
    for (const entry of pending) await tally.add('status' in entry ? entry : byIndex.get(entry.index)!);
    progress.update(bytes, { records: tally.done, failed: tally.failed });
    pending = [];
    chunk = [];
  };

  try {
    for await (const item of readRecordStream(input, (n) => (bytes = n), deps.signal)) {
      if (tally.stopped) break;
      const prepared = prepare(item, context);
      if ('status' in prepared && chunk.length === 0) {
        await tally.add(prepared);
        continue;
      }
      pending.push(prepared);
      if (!('status' in prepared)) chunk.push(prepared);
      if (chunk.length >= options.batchSize || pending.length >= options.batchSize * 10) await flush();
    }
  } finally {
    // The chunk gathered so far is sent, also after Ctrl-C: it would otherwise be lost.
    if (!tally.stopper) await flush();
    progress.stop();
    (input.stream as { destroy?: () => void }).destroy?.();
  }
  await tally.finish({ noun: 'attestation', verb: 'attested', seconds: (Date.now() - started) / 1000, dryRun: false });
}
