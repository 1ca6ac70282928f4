/**
 * govctl/server: the reference service (docs/architecture.md, docs/service.md).
 * - createApp: the Fastify application, every endpoint, one error handler;
 * - startServer / runUntilSignal: `govctl serve`;
 * - provision and the API-key and gate-policy functions: `govctl admin`;
 * - openLocalStore: the embedded store, the same application in-process.
 */
export { createApp, DEFAULT_RATE_LIMIT_PER_MINUTE, type AppOptions, type ServiceApp } from './app.js';
export { startServer, runUntilSignal, DEFAULT_HOST, DEFAULT_PORT, type ServerOptions, type RunningServer, type RunUntilSignalOptions } from './serve.js';
export {
  provision,
  createApiKey,
  listApiKeys,
  revokeApiKey,
  setGatePolicy,
  getGatePolicy,
  resetGatePolicy,
  addSigningKey,
  revokeSigningKey,
  listSigningKeys,
  setSigningKeyPolicy,
  KEY_POLICIES,
  AdminError,
  type ApiKeyInfo,
  type CreatedApiKey,
  type CreateApiKeyOptions,
  type GatePolicyEntry,
  type ProvisionOptions,
  type Provisioned,
  type SetGatePolicyOptions,
  type KeyPolicy,
  type SigningKeyInfo,
  type SigningKeyRegistry,
} from './admin.js';
export { openLocalStore, type LocalStore, type LocalTransport, type LocalRequest, type LocalResponse } from './local-store.js';
export { HttpError, ERROR_CODES, type ErrorBody, type ErrorCode, type LogLine } from './errors.js';
export { createLogWriter, LOG_FLUSH_MS, type LogClock, type LogWriter } from './log-writer.js';
export { SchemaVersionError } from './store/database.js';
export { VerifyPool, POOL_MIN_JOBS } from './verify-pool.js';
export type { WitnessJob } from './witness.js';
export { BODY_LIMIT, BATCH_BODY_LIMIT } from './json-body.js';
export { MAX_BATCH_SIZE } from './routes/attestations.js';
export { SOURCES, type Source } from './routes/deps.js';
export { LIST_DEFAULT_DAYS, LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT } from './routes/evidence.js';
