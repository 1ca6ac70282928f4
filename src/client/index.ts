/**
 * govctl: the client library for the governance evidence service (docs/library.md).
 *
 * @example
 * import { GovernanceClient } from 'govctl';
 * const client = new GovernanceClient({ systemName: 'loan-scorer', onError: 'raise' });
 * await client.aiRiskAssessment({ systemName: 'loan-scorer', riskLevel: 'high', annexIiiCategory: 'essential_services',
 *   summary: 'Scores consumer loan applications', intendedPurpose: 'Assist underwriters',
 *   impactDomains: ['credit'], art5SelfAssessment: true, assessor: 'alice@example.com' });
 * await client.close();
 *
 * See docs/library.md.
 */
export { GovernanceClient, type GovernanceClientOptions, type OnErrorMode, type ClientLogger } from './client.js';
export {
  createServiceApi,
  type ServiceApi,
  type ServiceApiOptions,
  type RequestTrace,
  type PostEvidenceOptions,
  type WriteOptions,
  type BatchWriteOptions,
  type CallOptions,
  type EvidenceExportPage,
} from './api.js';
export { idempotencyKeyFor, withIdempotencyKey, DERIVED_KEY_PREFIX } from './idempotency.js';
export {
  createHttpTransport,
  DEFAULT_TIMEOUT_MS,
  type Transport,
  type TransportRequest,
  type TransportResponse,
  type HttpTransportOptions,
} from './transport.js';
export {
  AttestationError,
  ValidationError,
  UnauthorizedError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  NetworkError,
  ConfigError,
  errorFromResponse,
  WORKSPACE_UNRESOLVED_MESSAGE,
  type AttestationErrorCode,
} from './errors.js';
export { DEFAULT_RETRY_POLICY, decideRetry, decideFailureRetry, parseRetryAfter, type RetryPolicy, type RetryDecision } from './retry.js';
export { CLIENT_VERSION } from './version.js';
export type * from './inputs.js';
export type * from './attestation-inputs.js';
export type { FlushReport, BatchItem } from './batch-buffer.js';
export type * from './wire-types.js';

// Core items users of the library need: keys, the record-type list, signature checks, hashing.
export { SigningKey, SigningKeyError, verifyClientSig, verifyWitness, signClientSig, signWitness, CLIENT_SIG_ALGO } from '../core/signing/index.js';
export { RECORD_TYPES, type RecordType, type ValidationIssue } from '../core/records/types.js';
export { hashValue, sha256Hex, sha256Stream } from '../core/hashing.js';
export { JsonFloat, parseJsonLossless, canonicalize, type JsonValue } from '../core/canonical-json.js';
export { SCHEMA_VERSION, type AttestationRecord } from '../core/attestations.js';
export type { EvidenceRecord } from '../core/records/build.js';
