/**
 * What the attestation operations of {@link GovernanceClient} take and return (docs/wire-format.md "Attestations"; docs/library.md "Attestations").
 */
import type { AttestationError } from './errors.js';
import type { FlushReport } from './batch-buffer.js';
import type { TrustTier } from './wire-types.js';

/** Who authorised a tool run (docs/wire-format.md "Attestations"); `sessionId` travels as `session_id`. */
export interface AuthorisedByInput {
  /** e-mail or principal id */
  identity: string;
  role?: string;
  sessionId?: string;
}

/** `push(...)`: an attestation with hashes the caller computed. */
export interface PushInput {
  toolName: string;
  /** hex SHA-256 of the input (64 hex characters), e.g. from `hashValue(input)` */
  inputHash: string;
  /** hex SHA-256 of the output */
  outputHash: string;
  /** when the tool ran (default: now) */
  executedAt?: string | Date;
  modelId?: string;
  /** default: the client's `authorisedBy` */
  authorisedBy?: AuthorisedByInput;
}

/**
 * What `push` and `trace` return (docs/service.md "POST …/attestations/external" in camelCase). An empty `attestationId` means the
 * attestation was not stored: `detail` says why, `error` holds the error.
 */
export interface AttestationResult {
  /** `att_…`, or '' when not stored */
  attestationId: string;
  externalVerified: boolean;
  /** either value set of docs/security.md "What the trust tiers mean"; null when not stored */
  trustTier: TrustTier | null;
  /** `ok`, or why it failed */
  detail: string;
  error?: AttestationError;
}

/** How `wrap` sends each call's attestation. */
export type WrapMode = 'sync' | 'batch';

export interface WrapOptions {
  /** the attested tool's name (default: the function's name, or `anonymous`) */
  toolName?: string;
  /**
   * `sync` (default): one request per call; an async function's promise settles after it.
   * `batch`: into the batch buffer, flushed by size, interval, `flush()`, `close()` or at exit.
   */
  mode?: WrapMode;
  modelId?: string;
  /** default: the client's `authorisedBy` */
  authorisedBy?: AuthorisedByInput;
}

/** The handle `trace` passes to its callback. */
export interface TraceContext {
  /** the value whose hash becomes `input_hash` (default: null) */
  setInput(value: unknown): void;
  /** the value whose hash becomes `output_hash` (default: the callback's return value) */
  setOutput(value: unknown): void;
  setModelId(modelId: string): void;
}

/** The handle `batch` passes to its callback. */
export interface BatchContext {
  /** buffers one attestation; everything added is flushed when the callback ends */
  add(input: PushInput): void;
}

/** What `flush` and `batch` report: sent, accepted, rejected, lost, per-item results and the reasons. */
export type FlushResult = FlushReport;
