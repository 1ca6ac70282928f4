/**
 * The verifier: what `govctl ledger`, `evidence verify`, `attest verify` and `govctl mcp` check of a
 * service, in one place, over the client and core. Everything the service answers is untrusted;
 * a check that fails is a named discrepancy (LedgerCheckError, or a problem in an audit's report).
 * See docs/ledger.md.
 */
export { auditLog, type AuditOptions, type AuditProgress, type AuditReport, type Compared } from './audit.js';
export { checkConsistency, checkpointSummary, fetchCheckpoint, openVerified, requireCosignatures, verifyInclusionProof } from './log.js';
export { proveRecord, type Proven, type Sleep } from './prove.js';
export {
  readStoredRecord,
  storedRecord,
  recordDigest,
  verifyAttestationSignature,
  verifyEvidenceSignature,
  verifyStoredAttestation,
  type VerifyResult,
  type VerifyStatus,
} from './records.js';
export { storedAttestations } from './stored.js';
export { readJson } from './untrusted.js';
