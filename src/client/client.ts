/**
 * `GovernanceClient`: the client library of docs/library.md. One method per
 * record type (generated from the record-type catalogue), attestations by `push`, `wrap`, `trace`
 * and `batch`, a batch buffer flushed by size, interval, `flush`, `close` and at process exit, an
 * error mode (`warn`, `raise`, `silent`), and signing with the client's own key, which never leaves it.
 */
import { buildAttestation, validateAttestation, type AttestationRecord } from '../core/attestations.js';
import { CanonicalJsonError } from '../core/canonical-json.js';
import { hashValue } from '../core/hashing.js';
import { buildRecord, partsFromInputs, type EvidenceRecord } from '../core/records/build.js';
import { CATALOGUE, isRecordType, recordTypeSpec } from '../core/records/catalogue.js';
import { RECORD_TYPES, type RecordType, type RecordTypeSpec, type TopLevel } from '../core/records/types.js';
import { checkName } from '../core/records/validate.js';
import { isPlainObject } from '../core/canonical-json.js';
import { CLIENT_SIG_ALGO, signClientSig, UnsignableRecordError } from '../core/signing/hmac.js';
import { signWitness } from '../core/signing/ed25519.js';
import { SigningKey, SigningKeyError } from '../core/signing/keys.js';
import { createServiceApi, type RequestTrace, type ServiceApi } from './api.js';
import type { AttestationResult, AuthorisedByInput, BatchContext, FlushResult, PushInput, TraceContext, WrapMode, WrapOptions } from './attestation-inputs.js';
import { BatchBuffer, mergeReports, type FlushReport } from './batch-buffer.js';
import { AttestationError, ConfigError, NetworkError, ValidationError, withMessage } from './errors.js';
import { idempotencyKeyFor, withIdempotencyKey } from './idempotency.js';
import type { RecordMethods, RecordResult } from './inputs.js';
import type { Transport } from './transport.js';

/** What the client does when an operation fails (docs/library.md "Error modes"). */
export type OnErrorMode = 'warn' | 'raise' | 'silent';

/** Where warnings go. */
export interface ClientLogger {
  warn(message: string): void;
}

/** Options of {@link GovernanceClient}: the settings table of docs/library.md "Settings", plus injection points. */
export interface GovernanceClientOptions {
  /** the API key; default: environment variable `SERVICE_API_KEY`. Required. */
  apiKey?: string;
  /** the AI system the client reports for (`system_name`). Required. */
  systemName: string;
  /** the workspace; default: `SERVICE_WORKSPACE_ID`, else resolved with GET /api/me on first call */
  workspaceId?: string;
  /** the service's address; default: `SERVICE_BASE_URL` (required unless `transport` is given) */
  baseUrl?: string;
  /** `agent_name` of attestations; default: the system name */
  agentName?: string;
  /**
   * 32-byte hex key (or a {@link SigningKey}) that enables signing: `client_sig` on evidence,
   * `witness_sig` on attestations. Default: `SERVICE_SIGNING_KEY`, else nothing is signed. Never sent.
   */
  signingKey?: string | SigningKey;
  /** default `authorised_by` of attestations */
  authorisedBy?: AuthorisedByInput;
  /** `warn` (default): log and return an empty result; `raise`: throw; `silent`: return an empty result */
  onError?: OnErrorMode;
  /** ms between automatic flushes of the batch buffer (default 30 000) */
  batchFlushInterval?: number;
  /** records per batch: the buffer flushes when it holds this many (default 100) */
  batchMaxSize?: number;
  /** carries the requests instead of HTTP to baseUrl (tests, the CLI's embedded store); stays the caller's to close */
  transport?: Transport;
  /** where warnings go (default: `process.emitWarning` with type `GovernanceClientWarning`) */
  logger?: ClientLogger;
  /** flush buffered attestations when the process is about to exit (default true) */
  flushOnExit?: boolean;
  /**
   * send an idempotency key derived from each record's content (default true), so that a retry
   * after a timeout or a 5xx (made once, automatically) never stores a record twice
   */
  idempotency?: boolean;
  /** called after each HTTP attempt with method, URL, status and duration (never headers) */
  onRequest?: (trace: RequestTrace) => void;
  /** `User-Agent` (default `govctl/<version>`) */
  userAgent?: string;
  /** where `SERVICE_*` settings are read from (default `process.env`) */
  env?: Readonly<Record<string, string | undefined>>;
  /** @internal per-attempt timeout in ms; fixed at 15 000 by docs/library.md "Settings", an option only for tests */
  timeoutMs?: number;
  /** @internal the wait before a retry (tests) */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** @internal the clock for default timestamps (tests) */
  now?: () => Date;
}

const DEFAULT_FLUSH_INTERVAL_MS = 30_000;
const DEFAULT_BATCH_MAX_SIZE = 100;
const ON_ERROR_MODES: readonly OnErrorMode[] = ['warn', 'raise', 'silent'];

const defaultLogger: ClientLogger = {
  warn(message) {
    process.emitWarning(message, { type: 'GovernanceClientWarning', code: 'GOVCTL_CLIENT' });
  },
};

function setting(value: string | undefined, env: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  const chosen = value ?? env[name];
  return typeof chosen === 'string' && chosen.trim() !== '' ? chosen.trim() : undefined;
}

/** Whatever went wrong, as an AttestationError (errors of the core become their typed equivalents). */
function asAttestationError(error: unknown): AttestationError {
  if (error instanceof AttestationError) return error;
  if (error instanceof SigningKeyError) return new ConfigError(error.message, { cause: error });
  if (error instanceof CanonicalJsonError || error instanceof UnsignableRecordError) {
    return new ValidationError('validation_error', error.message, { cause: error });
  }
  const text = error instanceof Error ? error.message : String(error);
  return new AttestationError('internal_error', `unexpected error: ${text}`, { cause: error });
}

/** Date inputs become ISO strings; `date` fields (YYYY-MM-DD) take only the date part. */
function withDates(spec: RecordTypeSpec, input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...input };
  const dateOnly = new Set(spec.fields.filter((field) => field.kind === 'date').map((field) => field.input));
  for (const [key, value] of Object.entries(out)) {
    if (value instanceof Date && !Number.isNaN(value.getTime())) {
      out[key] = dateOnly.has(key) ? value.toISOString().slice(0, 10) : value.toISOString();
    }
  }
  return out;
}

/** JSON has no `undefined`; an argument left undefined is hashed as null. */
function jsonArgs(args: readonly unknown[]): unknown[] {
  return args.map((arg) => (arg === undefined ? null : arg));
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

function emptyAttestation(failure: AttestationError): AttestationResult {
  return { attestationId: '', externalVerified: false, trustTier: null, detail: failure.message, error: failure };
}

/**
 * The governance client (docs/library.md). Create one per system and process; close it when done.
 *
 * @example
 * import { GovernanceClient } from 'govctl';
 * const client = new GovernanceClient({ systemName: 'loan-scorer' }); // SERVICE_API_KEY, SERVICE_BASE_URL from the environment
 * const result = await client.modelEvaluation({ modelName: 'scorer-v3', datasetName: 'holdout-2026q1', score: 0.91, evaluatedBy: 'ml@example.com' });
 * if (!result.recordId) console.error(result.detail);
 * const score = client.wrap(scoreApplication, { toolName: 'score_application' });
 * await client.close();
 */
export class GovernanceClient {
  /** the configured system (`system_name` of records and attestations) */
  readonly systemName: string;
  /** `agent_name` of attestations */
  readonly agentName: string;
  readonly onError: OnErrorMode;
  readonly batchMaxSize: number;
  readonly batchFlushInterval: number;
  /** the wire-level API the client is built on (same key, transport and workspace) */
  readonly api: ServiceApi;
  readonly #signingKey: SigningKey | undefined;
  readonly #authorisedBy: AuthorisedByInput | undefined;
  readonly #logger: ClientLogger;
  readonly #now: () => Date;
  readonly #buffer: BatchBuffer;
  readonly #flushOnExit: boolean;
  readonly #idempotency: boolean;
  readonly #background = new Set<Promise<unknown>>();
  /** failures of background work under `raise`, thrown by the next flush/close */
  #deferred: AttestationError[] = [];
  /** the reports of automatic flushes, gathered for each batch() in progress */
  readonly #batchReports = new Set<FlushReport[]>();
  #exitListener: (() => void) | undefined;
  #closed = false;
  #closing: Promise<FlushResult> | undefined;

  /**
   * @throws ConfigError when the API key or system name is missing, the base URL or signing key is
   *   malformed, or an option is out of range. These are set-up mistakes, so they throw whatever onError says.
   */
  constructor(options: GovernanceClientOptions) {
    const env = options.env ?? process.env;
    const apiKey = setting(options.apiKey, env, 'SERVICE_API_KEY');
    if (!apiKey) throw new ConfigError('API key is not set: give apiKey or set SERVICE_API_KEY');
    const nameIssues = checkName(options.systemName, 'systemName', true);
    if (nameIssues.length > 0) throw new ConfigError(`systemName ${nameIssues[0].message}: every record and attestation names the AI system`);
    this.systemName = options.systemName;
    this.agentName = options.agentName ?? options.systemName;
    const agentIssues = checkName(this.agentName, 'agentName', true);
    if (agentIssues.length > 0) throw new ConfigError(`agentName ${agentIssues[0].message}`);

    this.onError = options.onError ?? 'warn';
    if (!ON_ERROR_MODES.includes(this.onError)) throw new ConfigError(`onError must be one of: ${ON_ERROR_MODES.join(', ')}`);
    this.batchMaxSize = options.batchMaxSize ?? DEFAULT_BATCH_MAX_SIZE;
    if (!Number.isInteger(this.batchMaxSize) || this.batchMaxSize < 1) throw new ConfigError('batchMaxSize must be a whole number of at least 1');
    this.batchFlushInterval = options.batchFlushInterval ?? DEFAULT_FLUSH_INTERVAL_MS;
    if (!Number.isFinite(this.batchFlushInterval) || this.batchFlushInterval <= 0) throw new ConfigError('batchFlushInterval must be a positive number of ms');

    if (options.signingKey instanceof SigningKey) this.#signingKey = options.signingKey;
    else {
      const hex = setting(options.signingKey, env, 'SERVICE_SIGNING_KEY');
      try {
        this.#signingKey = hex === undefined ? undefined : SigningKey.fromHex(hex, options.signingKey !== undefined ? 'signingKey' : 'SERVICE_SIGNING_KEY');
      } catch (error) {
        throw asAttestationError(error);
      }
    }
    if (options.authorisedBy !== undefined && (!isPlainObject(options.authorisedBy) || typeof options.authorisedBy.identity !== 'string')) {
      throw new ConfigError('authorisedBy must be an object with an identity (and optionally role and sessionId)');
    }
    this.#authorisedBy = options.authorisedBy;
    this.#logger = options.logger ?? defaultLogger;
    this.#now = options.now ?? (() => new Date());
    this.#flushOnExit = options.flushOnExit ?? true;
    this.#idempotency = options.idempotency ?? true;

    const baseUrl = setting(options.baseUrl, env, 'SERVICE_BASE_URL');
    const workspaceId = setting(options.workspaceId, env, 'SERVICE_WORKSPACE_ID');
    this.api = createServiceApi({
      apiKey,
      ...(options.transport ? { transport: options.transport } : {}),
      ...(baseUrl ? { baseUrl } : {}),
      ...(workspaceId ? { workspaceId } : {}),
      ...(options.userAgent ? { userAgent: options.userAgent } : {}),
      ...(options.onRequest ? { onRequest: options.onRequest } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    });

    this.#buffer = new BatchBuffer({
      maxSize: this.batchMaxSize,
      flushIntervalMs: this.batchFlushInterval,
      send: (records) => this.#sendBatch(records),
      onAutoFlush: (report) => {
        for (const reports of this.#batchReports) reports.push(report);
        this.#reportInBackground(report);
      },
      toError: asAttestationError,
    });
  }

  // One method per record type (docs/library.md "Evidence records"). The methods are made from the catalogue, so a record
  // type added there is a method here; RecordMethods (inputs.ts) gives them their types.
  static {
    for (const spec of CATALOGUE.values()) {
      Object.defineProperty(GovernanceClient.prototype, spec.method, {
        value(this: GovernanceClient, input: object) {
          return this.record(spec.type, input);
        },
        writable: true,
        configurable: true,
      });
    }
  }

  /** Attestations waiting in the batch buffer (including a flush in progress). */
  get buffered(): number {
    return this.#buffer.pending;
  }

  /**
   * Builds, validates, signs (with a signing key) and stores one evidence record of any type: the
   * generic form of the record methods (`client.modelEvaluation(input)` is `client.record('model_evaluation', input)`).
   * Failures follow onError; under warn and silent the result has an empty recordId and `detail` says why.
   *
   * @example await client.record('vendor_risk', { vendorName: 'Acme AI', riskLevel: 'medium', lastReviewed: '2026-01-15' })
   */
  async record(type: RecordType, input: object): Promise<RecordResult> {
    try {
      this.#checkOpen();
      const record = this.#buildEvidence(type, input);
      const workspaceId = await this.api.resolveWorkspaceId();
      // Signed only now: the workspace id is part of the signed message (docs/wire-format.md "client_sig"), and the
      // first record of a client is the one that waits for GET /api/me.
      if (this.#signingKey) {
        record.client_sig = signClientSig(record, workspaceId, this.#signingKey);
        record.client_sig_algo = CLIENT_SIG_ALGO;
      }
      const dryRun = (input as { dryRun?: unknown }).dryRun === true;
      const reply = await this.api.postEvidence(record, { dryRun, ...(this.#idempotency && !dryRun ? { idempotencyKey: idempotencyKeyFor(record) } : {}) });
      return {
        recordId: typeof reply.record_id === 'string' ? reply.record_id : '',
        recordType: typeof reply.record_type === 'string' ? reply.record_type : type,
        mappedControls: Array.isArray(reply.mapped_controls) ? reply.mapped_controls : [],
        detail: typeof reply.detail === 'string' ? reply.detail : 'ok',
        ...(reply.replayed === true ? { replayed: true } : {}),
      };
    } catch (error) {
      const failure = this.#failed(error, `${type} record not stored`);
      return { recordId: '', recordType: type, mappedControls: [], detail: failure.message, error: failure };
    }
  }

  /**
   * Stores one attestation of a tool run whose input and output hashes the caller computed.
   * Signed with `witness_sig` when a signing key is configured. Failures follow onError.
   *
   * @example
   * const result = await client.push({ toolName: 'summarise', inputHash: hashValue(doc), outputHash: hashValue(summary) });
   * result.trustTier // 'witnessed' with a signing key, 'declared' without
   */
  async push(input: PushInput): Promise<AttestationResult> {
    try {
      this.#checkOpen();
      return await this.#sendAttestation(this.#prepareAttestation(input));
    } catch (error) {
      return emptyAttestation(this.#failed(error, `attestation of ${describeTool(input)} not stored`));
    }
  }

  /**
   * Wraps a function so that every call is attested: input hash = `hashValue(args)` (arguments left
   * `undefined` count as null), output hash = `hashValue(result)`. Works for sync and async functions;
   * the wrapper returns what the function returns and rethrows what it throws (a call that throws is
   * not attested: it has no output).
   *
   * - mode `sync` (default): one request per call. An async function's promise settles after the
   *   attestation is sent; a sync function returns at once and its attestation is sent in the
   *   background (`flush()` and `close()` wait for it; under raise they throw its failure).
   * - mode `batch`: the attestation goes into the batch buffer.
   *
   * @example
   * const classify = client.wrap(async (text: string) => model.classify(text), { toolName: 'classify' });
   * const label = await classify('…'); // attested
   */
  wrap<A extends unknown[], R>(fn: (...args: A) => R, options: WrapOptions = {}): (...args: A) => R {
    if (typeof fn !== 'function') throw new ConfigError('wrap needs a function');
    const mode: WrapMode = options.mode ?? 'sync';
    if (mode !== 'sync' && mode !== 'batch') throw new ConfigError("wrap mode must be 'sync' or 'batch'");
    const toolName = options.toolName ?? (fn.name || 'anonymous');
    const client = this;
    const wrapped = function (this: unknown, ...args: A): R {
      const executedAt = client.#now();
      const result = fn.apply(this, args);
      if (isPromiseLike(result)) {
        return Promise.resolve(result).then(async (value) => {
          await client.#attestCall(toolName, jsonArgs(args), value, executedAt, options, mode);
          return value;
        }) as R;
      }
      const sending = client.#attestCall(toolName, jsonArgs(args), result, executedAt, options, mode);
      client.#track(sending.catch((error: unknown) => client.#defer(error)));
      return result;
    };
    Object.defineProperty(wrapped, 'name', { value: fn.name, configurable: true });
    return wrapped;
  }

  /**
   * Runs `fn` and attests it as one tool run, with the input and output the callback names through
   * its context (output defaults to the callback's return value). Returns what `fn` returns; rethrows
   * what it throws (then nothing is attested). The attestation is sent before `trace` resolves.
   *
   * @example
   * const answer = await client.trace('answer_question', async (ctx) => {
   *   ctx.setInput(question);
   *   ctx.setModelId('gpt-x-2026-01');
   *   return await llm.answer(question);
   * });
   */
  async trace<T>(toolName: string, fn: (ctx: TraceContext) => T | Promise<T>, options: Omit<WrapOptions, 'toolName' | 'mode'> = {}): Promise<T> {
    let input: unknown = null;
    let output: { value: unknown } | undefined;
    let modelId = options.modelId;
    const ctx: TraceContext = {
      setInput(value) {
        input = value;
      },
      setOutput(value) {
        output = { value };
      },
      setModelId(id) {
        modelId = id;
      },
    };
    const executedAt = this.#now();
    const result = await fn(ctx);
    await this.#attestCall(toolName, input, output ? output.value : result, executedAt, { ...options, ...(modelId !== undefined ? { modelId } : {}) }, 'sync');
    return result;
  }

  /**
   * Collects attestations with `b.add(...)` and flushes them (with anything else buffered) when the
   * callback ends, through the batch endpoint in chunks of batchMaxSize. Returns the report of every
   * flush from start to end: the chunks sent by themselves along the way, and the last.
   *
   * @example
   * const report = await client.batch(async (b) => {
   *   for (const call of calls) b.add({ toolName: call.tool, inputHash: call.inHash, outputHash: call.outHash });
   * });
   * report.accepted // how many the service stored
   */
  async batch(fn: (b: BatchContext) => void | Promise<void>): Promise<FlushResult> {
    // The flushes the buffer starts by itself while `fn` adds (every batchMaxSize records) belong to
    // this batch's report too: it counts every record added, not only the last chunk's.
    const automatic: FlushReport[] = [];
    this.#batchReports.add(automatic);
    const context: BatchContext = {
      add: (input) => {
        try {
          this.#checkOpen();
          this.#enqueue(this.#prepareAttestation(input));
        } catch (error) {
          this.#failed(error, `attestation of ${describeTool(input)} not buffered`);
        }
      },
    };
    try {
      try {
        await fn(context);
      } catch (error) {
        await this.flush().catch(() => undefined);
        throw error;
      }
      // The last flush runs after the automatic ones, whose reports have arrived by then.
      const last = await this.flush();
      return mergeReports([...automatic, last]);
    } finally {
      this.#batchReports.delete(automatic);
    }
  }

  /**
   * Sends every buffered attestation now (after background sends finish). Under warn, records that
   * could not be delivered are reported through the logger; under raise, the first failure is thrown.
   *
   * @example await client.flush() // { sent: 3, accepted: 3, rejected: 0, lost: 0, results: [...], errors: [] }
   */
  async flush(): Promise<FlushResult> {
    await this.#settleBackground();
    const report = await this.#buffer.flush();
    const deferred = this.#deferred;
    this.#deferred = [];
    const problems = [...deferred, ...reportProblems(report)];
    if (problems.length > 0) {
      if (this.onError === 'raise') throw problems[0];
      if (this.onError === 'warn') for (const problem of problems) this.#logger.warn(problem.message);
    }
    return report;
  }

  /**
   * Flushes the buffer, waits for background sends, and releases the connection (a transport
   * given in the options stays open: it is the caller's). Idempotent. Later operations fail with
   * code `client_closed`. Records still buffered when a process ends without close are flushed by
   * the exit hook; close is still the reliable way.
   *
   * @example process.on('SIGTERM', () => void client.close());
   */
  close(): Promise<FlushResult> {
    this.#closing ??= (async () => {
      this.#closed = true;
      try {
        return await this.flush();
      } finally {
        this.#buffer.stop();
        this.#removeExitHook();
        await this.api.close();
      }
    })();
    return this.#closing;
  }

  /** The same as {@link GovernanceClient.close} (existing clients call it either way; docs/library.md "Flush, close and process exit"). */
  shutdown(): Promise<FlushResult> {
    return this.close();
  }

  /**
   * What the process's `beforeExit` listener runs: flushes records still buffered and reports,
   * through the logger, how many could not be delivered and why (under warn and raise; nothing under
   * silent). Exposed for tests and for hosts that manage exit themselves; never throws.
   * @internal
   */
  async handleBeforeExit(): Promise<void> {
    try {
      await this.#settleBackground();
      if (this.#buffer.pending === 0 && this.#deferred.length === 0) return;
      const report = await this.#buffer.flush();
      const deferred = this.#deferred;
      this.#deferred = [];
      if (this.onError === 'silent') return;
      for (const problem of [...deferred, ...reportProblems(report)]) this.#logger.warn(`at exit: ${problem.message}`);
    } catch (error) {
      if (this.onError !== 'silent') this.#logger.warn(`at exit: ${asAttestationError(error).message}`);
    }
  }

  // ----------------------------------------------------------------------------------------------

  // A NetworkError like the transport's own client_closed (docs/library.md "Errors"), so that callers
  // and the CLI's exit codes treat both the same.
  #checkOpen(): void {
    if (this.#closed) throw new NetworkError('client_closed', 'the client is closed; create a new GovernanceClient');
  }

  /** Applies the onError mode to a failure: raise throws it, warn logs it, silent says nothing. */
  #failed(error: unknown, what: string): AttestationError {
    const failure = asAttestationError(error);
    if (this.onError === 'raise') throw failure;
    if (this.onError === 'warn') this.#logger.warn(`${what}: ${failure.message}`);
    return failure;
  }

  #buildEvidence(type: RecordType, input: object): EvidenceRecord {
    if (!isRecordType(type)) throw new ValidationError('validation_error', `record type must be one of: ${RECORD_TYPES.join(', ')}`, { field: 'record_type' });
    if (!isPlainObject(input)) throw new ValidationError('validation_error', `${type} input must be an object`);
    const spec = recordTypeSpec(type);
    const inputs = withDates(spec, input);
    const parts = partsFromInputs(type, inputs);
    const overrides: TopLevel = {};
    const common: [keyof TopLevel, string][] = [
      ['occurred_at', 'occurredAt'],
      ['identity', 'identity'],
      ['resource', 'resource'],
      ['environment', 'environment'],
    ];
    for (const [member, name] of common) if (inputs[name] !== undefined) overrides[member] = inputs[name] as string;
    const systemName = spec.systemFromInput ? inputs[spec.systemFromInput] : this.systemName;
    const built = buildRecord(type, { ...parts, systemName: systemName as string, overrides }, this.#now);
    if (!built.ok) throw ValidationError.fromIssues(`${type} record`, built.issues);
    return built.record;
  }

  #prepareAttestation(input: PushInput): AttestationRecord {
    if (!isPlainObject(input)) throw new ValidationError('validation_error', 'attestation input must be an object');
    if (input.executedAt instanceof Date && Number.isNaN(input.executedAt.getTime())) {
      throw ValidationError.fromIssues('attestation', [{ path: 'executed_at', code: 'format', message: 'is an invalid Date' }]);
    }
    const authorisedBy = input.authorisedBy ?? this.#authorisedBy;
    const record = buildAttestation(
      {
        systemName: this.systemName,
        agentName: this.agentName,
        toolName: input.toolName,
        inputHash: input.inputHash,
        outputHash: input.outputHash,
        ...(input.executedAt !== undefined ? { executedAt: input.executedAt } : {}),
        ...(input.modelId !== undefined ? { modelId: input.modelId } : {}),
        ...(authorisedBy !== undefined ? { authorisedBy } : {}),
      },
      this.#now,
    );
    const issues = validateAttestation(record);
    if (issues.length > 0) throw ValidationError.fromIssues('attestation', issues);
    return record;
  }

  /** `witness_sig` and `verifying_key_hex` added, when there is a key (docs/wire-format.md). */
  #signed(record: AttestationRecord, workspaceId: string): AttestationRecord {
    return this.#signingKey ? { ...record, ...signWitness(record as unknown as Record<string, unknown>, workspaceId, this.#signingKey) } : record;
  }

  async #sendAttestation(record: AttestationRecord): Promise<AttestationResult> {
    const workspaceId = await this.api.resolveWorkspaceId();
    const signed = this.#signed(record, workspaceId);
    const reply = await this.api.postAttestation(signed, this.#idempotency ? { idempotencyKey: idempotencyKeyFor(signed) } : {});
    return {
      attestationId: typeof reply.attestation_id === 'string' ? reply.attestation_id : '',
      externalVerified: reply.external_verified === true,
      trustTier: typeof reply.trust_tier === 'string' ? reply.trust_tier : null,
      detail: typeof reply.detail === 'string' ? reply.detail : 'ok',
    };
  }

  async #sendBatch(records: AttestationRecord[]) {
    const workspaceId = await this.api.resolveWorkspaceId();
    const signed = records.map((record) => this.#signed(record, workspaceId));
    return this.#idempotency ? this.api.postAttestationBatch(signed.map(withIdempotencyKey), { idempotent: true }) : this.api.postAttestationBatch(signed);
  }

  /**
   * The attestation of one call. The record is built (and the values hashed) synchronously, before
   * the caller can change them; failures of that step follow onError at once (raise throws here).
   * The returned promise sends it (sync) or has buffered it (batch); under raise it rejects on failure.
   */
  #attestCall(
    toolName: string,
    inputValue: unknown,
    outputValue: unknown,
    executedAt: Date,
    options: Omit<WrapOptions, 'toolName' | 'mode'>,
    mode: WrapMode,
  ): Promise<void> {
    let record: AttestationRecord;
    try {
      this.#checkOpen();
      record = this.#prepareAttestation({
        toolName,
        inputHash: hashValue(inputValue),
        outputHash: hashValue(outputValue),
        executedAt,
        ...(options.modelId !== undefined ? { modelId: options.modelId } : {}),
        ...(options.authorisedBy !== undefined ? { authorisedBy: options.authorisedBy } : {}),
      });
    } catch (error) {
      this.#failed(error, `attestation of ${toolName} not built`);
      return Promise.resolve();
    }
    if (mode === 'batch') {
      this.#enqueue(record);
      return Promise.resolve();
    }
    return this.#sendAttestation(record).then(
      () => undefined,
      (error: unknown) => {
        this.#failed(error, `attestation of ${toolName} not stored`);
      },
    );
  }

  #enqueue(record: AttestationRecord): void {
    this.#buffer.add(record);
    this.#addExitHook();
  }

  #track(promise: Promise<unknown>): void {
    this.#background.add(promise);
    void promise.finally(() => this.#background.delete(promise));
  }

  async #settleBackground(): Promise<void> {
    while (this.#background.size > 0) await Promise.allSettled([...this.#background]);
  }

  /** A background failure under raise: kept for the next flush/close to throw (and the exit hook to report). */
  #defer(error: unknown): void {
    this.#deferred.push(asAttestationError(error));
    this.#addExitHook();
  }

  /** The report of a flush the buffer started itself (size or interval). */
  #reportInBackground(report: FlushReport): void {
    const problems = reportProblems(report);
    if (problems.length === 0) return;
    if (this.onError === 'raise') for (const problem of problems) this.#defer(problem);
    else if (this.onError === 'warn') for (const problem of problems) this.#logger.warn(problem.message);
  }

  #addExitHook(): void {
    if (this.#exitListener || !this.#flushOnExit || this.#closed) return;
    this.#exitListener = () => void this.handleBeforeExit();
    process.on('beforeExit', this.#exitListener);
  }

  #removeExitHook(): void {
    if (this.#exitListener) process.removeListener('beforeExit', this.#exitListener);
    this.#exitListener = undefined;
  }
}

// The record methods the static block above defines, typed per record type (declaration merging).
export interface GovernanceClient extends RecordMethods {}

function describeTool(input: unknown): string {
  const name = isPlainObject(input) ? input.toolName : undefined;
  return typeof name === 'string' && name !== '' ? name : 'a tool';
}

/** A flush's lost and rejected records as errors, with counts and reasons. */
function reportProblems(report: FlushReport): AttestationError[] {
  const problems: AttestationError[] = [];
  if (report.lost > 0) {
    const why = report.errors.map((error) => error.message).join('; ') || 'unknown reason';
    const message = `${report.lost} buffered attestation${report.lost === 1 ? ' was' : 's were'} not delivered and ${report.lost === 1 ? 'is' : 'are'} lost: ${why}`;
    // The first chunk's error keeps its class (and so the CLI's exit code); the text gains the count.
    const first = report.errors[0];
    problems.push(first ? withMessage(first, message) : new AttestationError('internal_error', message));
  }
  if (report.rejected > 0) {
    const reasons = [...new Set(report.results.filter((item) => item.status !== 'accepted' && item.reason).map((item) => item.reason!))];
    problems.push(
      new ValidationError(
        'validation_error',
        `the service rejected ${report.rejected} of ${report.accepted + report.rejected} attestations${reasons.length ? `: ${reasons.slice(0, 3).join('; ')}` : ''}`,
      ),
    );
  }
  return problems;
}
