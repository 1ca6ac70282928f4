/**
 * govctl/server: the reference service (docs/architecture.md, docs/service.md). Only what a user of
 * the package runs; tests reach the internals through their own modules (src/server/…).
 * - createApp: the Fastify application, every endpoint, one error handler;
 * - startServer: `govctl serve` (which adds the signal handling);
 * - provision and the API-key and gate-policy functions: `govctl admin`;
 * - openLocalStore: the embedded store, the same application in-process.
 */
export { createApp, DEFAULT_RATE_LIMIT_PER_MINUTE, type AppOptions, type ServiceApp } from './app.js';
export { startServer, DEFAULT_HOST, DEFAULT_PORT, type ServerOptions, type RunningServer } from './serve.js';
export {
  provision,
  createApiKey,
  listApiKeys,
  revokeApiKey,
  setGatePolicy,
  getGatePolicy,
  resetGatePolicy,
  gatePolicyChanges,
  addSigningKey,
  revokeSigningKey,
  listSigningKeys,
  setSigningKeyPolicy,
  KEY_POLICIES,
  API_KEY_ROLES,
  AdminError,
  type ApiKeyInfo,
  type ApiKeyRole,
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
export {
  ledgerKeyPath,
  createLedgerKey,
  readLedgerKey,
  ledgerVerifierKeys,
  addWitness,
  listWitnesses,
  revokeWitness,
  LedgerKeyError,
  type WitnessInfo,
} from './admin.js';
export { MAX_MERGE_DELAY_MS } from './ledger/notes.js';
export type { AppLedgerOptions } from './app.js';
export { openLocalStore, type LocalStore, type LocalTransport, type LocalRequest, type LocalResponse } from './local-store.js';
export { HttpError, ERROR_CODES, type ErrorBody, type ErrorCode, type LogLine } from './errors.js';
export { createLogWriter, type LogClock, type LogWriter } from './log-writer.js';
export {
  SchemaVersionError,
  DatabaseInUseError,
  DatabaseReadOnlyError,
  DatabaseFileChangedError,
  DatabaseUnavailableError,
  UnstorableValueError,
  LogKeyMismatchError,
} from './store/errors.js';
export { assertWritable } from './store/sqlite/database.js';
export { MigrationSideError, MigrationTargetNotEmptyError } from './store/errors.js';
export type { CopyProgress, CopyResult, WorkspaceLogComparison } from './store/sqlite-to-postgres.js';

/**
 * `govctl admin migrate`'s copy of a SQLite database into PostgreSQL (store/sqlite-to-postgres.ts),
 * loaded when called: it brings the PostgreSQL driver, which nothing else on SQLite needs.
 */
export async function copySqliteToPostgres(
  ...args: Parameters<typeof import('./store/sqlite-to-postgres.js').copySqliteToPostgres>
): ReturnType<typeof import('./store/sqlite-to-postgres.js').copySqliteToPostgres> {
  return (await import('./store/sqlite-to-postgres.js')).copySqliteToPostgres(...args);
}
export { DEFAULT_LIMITS, type ServiceLimits } from './limits.js';
