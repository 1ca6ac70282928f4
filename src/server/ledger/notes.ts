/**
 * The transparency log's terms (docs/ledger.md): the promise on the merge delay, the error a ledger
 * read answers with, the log's options, and the checks on checkpoint notes, cosignatures and
 * witness keys (log.ts, admin.ts).
 */
import {
  CosignatureVerifier,
  openNote,
  parseCheckpoint,
  parseNote,
  parseVerifierKey,
  SIGNATURE_TYPE_COSIGNATURE_V1,
  type Ed25519NoteSigner,
} from '../../core/index.js';
import type { SigningKey } from '../../core/signing/keys.js';

/** The maximum merge delay the service promises (docs/ledger.md): a tick, plus the integration's own time, well inside it. */
export const MAX_MERGE_DELAY_MS = 1000;

/** A ledger read that cannot be answered as asked: `not_found` (no such record/size/tile) or `invalid` (a bad parameter). */
export class LedgerQueryError extends Error {
  override readonly name = 'LedgerQueryError';
  constructor(
    readonly code: 'not_found' | 'invalid' | 'no_key',
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export interface LedgerOptions {
  /** the log's Ed25519 key (its seed); without it the tree is kept but no checkpoint is signed */
  key?: SigningKey | null;
  /** `<prefix>/<workspace_id>` is a workspace log's origin and key name (default govctl.local/ledger) */
  originPrefix?: string;
  /** epoch ms, for checkpoint and cosignature bookkeeping */
  nowMs?: () => number;
}

/** Whether a stored checkpoint note carries the signer's signature (by key name and key id). */
export function signedBy(note: string, signer: Ed25519NoteSigner): boolean {
  return parseNote(note).signatures.some((signature) => signature.name === signer.name && signature.keyId === signer.keyId);
}

/** The body of a checkpoint note, for comparisons. */
export function checkpointBody(note: string): string {
  return parseNote(note).text;
}

/** Checks a witness verifier key for registration (type 0x04, cosignature v1). @throws LedgerQueryError */
export function checkWitnessKey(vkey: string): { name: string; vkey: string } {
  try {
    const parsed = parseVerifierKey(vkey.trim());
    if (parsed.type !== SIGNATURE_TYPE_COSIGNATURE_V1) throw new Error('not a cosignature (type 0x04) verifier key');
    return { name: parsed.name, vkey: vkey.trim() };
  } catch (error) {
    throw new LedgerQueryError('invalid', `not a witness verifier key: ${(error as Error).message}`, 'key');
  }
}

/**
 * The text and tree size of a checkpoint note a witness sends back (POST ledger/cosignatures).
 * @throws LedgerQueryError `invalid` when it is not a signed note of a checkpoint
 */
export function cosignedCheckpoint(note: string): { text: string; size: number } {
  let text: string;
  try {
    text = parseNote(note).text;
  } catch (error) {
    throw new LedgerQueryError('invalid', `not a signed note: ${(error as Error).message}`, 'checkpoint');
  }
  try {
    return { text, size: parseCheckpoint(text).size };
  } catch (error) {
    throw new LedgerQueryError('invalid', `not a checkpoint: ${(error as Error).message}`, 'checkpoint');
  }
}

/**
 * The cosignatures on `note` (whose body is `text`) by the workspace's registered witnesses
 * (`vkeys`), once the body is the checkpoint this log stored at that size (`storedNote`).
 * @throws LedgerQueryError `invalid` when the checkpoint is not this log's, no witness is registered, or none verifies
 */
export function verifiedCosignatures(note: string, text: string, storedNote: string | undefined, vkeys: readonly string[]): { name: string; line: string }[] {
  if (storedNote === undefined || parseNote(storedNote).text !== text)
    throw new LedgerQueryError('invalid', 'the note is not a checkpoint this log signed', 'checkpoint');
  const verifiers = vkeys.map((vkey) => CosignatureVerifier.fromVerifierKey(vkey));
  if (verifiers.length === 0) throw new LedgerQueryError('invalid', 'the workspace has no registered witness (govctl admin witness add)', 'checkpoint');
  let opened;
  try {
    opened = openNote(note, verifiers);
  } catch (error) {
    throw new LedgerQueryError('invalid', `no registered witness's cosignature verifies: ${(error as Error).message}`, 'checkpoint');
  }
  return opened.verified.map(({ signature }) => ({ name: signature.name, line: `${signature.line}\n` }));
}
