/**
 * The leaf entry of govctl's evidence log, version 1: the canonical JSON (core's Python-compatible
 * form, docs/wire-format.md) of exactly
 * `{"id", "kind": "evidence" | "attestation" | "gate_policy", "received_at", "sha256", "workspace_id"}`,
 * where `sha256` is the lower-case hex SHA-256 of the canonical JSON of the complete stored record
 * as the service returns it by id (for `gate_policy`, the policy change record, docs/ledger.md). Old leaves commit to these bytes forever: a change of members or
 * of the record's representation is a new version, marked by a `"v"` member that version 1 lacks.
 */
import { canonicalize, parseJsonLossless } from '../canonical-json.js';
import { sha256Hex } from '../hashing.js';
import { LedgerFormatError } from './errors.js';
import { isValidKeyName } from './note.js';

/** The entry format this module writes and reads. */
export const LEDGER_ENTRY_VERSION = 1;

/** What a leaf commits to: an evidence record, an attestation, or a change of the gate policy. */
export const LEDGER_ENTRY_KINDS = ['evidence', 'attestation', 'gate_policy'] as const;
export type LedgerEntryKind = (typeof LEDGER_ENTRY_KINDS)[number];

export interface LedgerEntry {
  readonly kind: LedgerEntryKind;
  readonly id: string;
  readonly workspace_id: string;
  readonly received_at: string;
  readonly sha256: string;
}

const MEMBERS = ['id', 'kind', 'received_at', 'sha256', 'workspace_id'];
const HEX_SHA256 = /^[0-9a-f]{64}$/;

function check(entry: LedgerEntry): void {
  if (!LEDGER_ENTRY_KINDS.includes(entry.kind))
    throw new LedgerFormatError(`a ledger entry kind is one of ${LEDGER_ENTRY_KINDS.map((kind) => `"${kind}"`).join(', ')}`);
  for (const member of ['id', 'workspace_id', 'received_at'] as const) {
    if (typeof entry[member] !== 'string' || entry[member].length === 0) throw new LedgerFormatError(`a ledger entry ${member} is a non-empty string`);
  }
  if (typeof entry.sha256 !== 'string' || !HEX_SHA256.test(entry.sha256)) throw new LedgerFormatError('a ledger entry sha256 is 64 lower-case hex digits');
}

/** The lower-case hex SHA-256 of a stored record's canonical JSON: what an entry's `sha256` commits to. */
export function recordSha256(record: Record<string, unknown>): string {
  return sha256Hex(canonicalize(record));
}

/** The entry text (version 1) of a stored record. @throws LedgerFormatError */
export function ledgerEntry(entry: LedgerEntry): string {
  check(entry);
  const { kind, id, workspace_id, received_at, sha256 } = entry;
  return canonicalize({ kind, id, workspace_id, received_at, sha256 });
}

/**
 * Reads an entry text, accepting only the exact bytes {@link ledgerEntry} writes (so that a leaf
 * has one spelling): the five members, all strings, in canonical JSON.
 * @throws LedgerFormatError
 */
export function parseLedgerEntry(text: string | Uint8Array): LedgerEntry {
  const source = typeof text === 'string' ? text : Buffer.from(text).toString('utf8');
  let value: unknown;
  try {
    value = parseJsonLossless(source);
  } catch {
    throw new LedgerFormatError('a ledger entry is JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LedgerFormatError('a ledger entry is a JSON object');
  const keys = Object.keys(value).sort();
  if (keys.length !== MEMBERS.length || keys.some((key, i) => key !== MEMBERS[i])) {
    throw new LedgerFormatError(`a version ${LEDGER_ENTRY_VERSION} ledger entry has exactly the members ${MEMBERS.join(', ')}`);
  }
  const entry = value as unknown as LedgerEntry;
  if (ledgerEntry(entry) !== source) throw new LedgerFormatError('a ledger entry is in canonical JSON');
  return entry;
}

/** The default log origin prefix (`govctl serve --log-origin`); see docs/decisions.md. */
export const DEFAULT_LOG_ORIGIN_PREFIX = 'govctl.local/ledger';

/**
 * A workspace log's origin, which is also its key name: `<prefix>/<workspace_id>`.
 * @throws LedgerFormatError when the result is not a valid key name (spaces, `+`, control characters)
 */
export function ledgerOrigin(prefix: string, workspaceId: string): string {
  const trimmed = prefix.replace(/\/+$/, '');
  const origin = `${trimmed}/${workspaceId}`;
  if (trimmed.length === 0 || workspaceId.length === 0 || /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) || !isValidKeyName(origin)) {
    throw new LedgerFormatError('a log origin is a schema-less name without spaces or plus signs, e.g. govctl.local/ledger/<workspace>');
  }
  return origin;
}
