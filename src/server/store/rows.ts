/**
 * The rows and queries the store interface (store.ts) speaks in, shared by every backend.
 * (Transitional: re-exported from the SQLite modules that define them until they move here.)
 */
export type { EvidenceListItem, EvidenceListQuery, EvidenceRow, ExportQuery, ExportRow, ListPosition } from './evidence.js';
export type { AttestationListQuery, AttestationRow, StoredAttestationRow, TierReason, TrustTier } from './attestations.js';
export type { ApiKeyInfo, AuthContext, CreatedApiKey, ProvisionOptions, Provisioned } from './identity.js';
export type { IdempotencyClaim, IdempotencyHit } from './idempotency.js';
export type { InclusionAnswer } from './ledger.js';
export type { KeyPolicy, SigningKeyInfo } from './signing-keys.js';
export type { SystemRow } from './systems.js';
export type { WitnessInfo } from '../admin.js';
