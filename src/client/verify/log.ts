/**
 * The log's own checks, on what the service sends: a checkpoint verified with the pinned log key
 * (and witnesses' cosignatures), consistency between two checkpoints, and the inclusion of one
 * leaf in a verified checkpoint (docs/ledger.md "What each command proves"). A check that fails
 * throws a {@link LedgerCheckError} naming what failed.
 */
import {
  CosignatureVerifier,
  Ed25519NoteVerifier,
  LedgerFormatError,
  LedgerVerificationError,
  leafHash,
  openCheckpoint,
  parseLedgerEntry,
  verifyConsistency,
  verifyInclusion,
  type LedgerEntry,
  type OpenedCheckpoint,
} from '../../core/ledger/index.js';
import { canonicalize } from '../../core/canonical-json.js';
import type { ServiceApi } from '../api.js';
import { LedgerCheckError, NotFoundError } from '../errors.js';
import { readReply, shown, wholeNumber } from './untrusted.js';

/** GET ledger/checkpoint, verified with the log key (and every given witness's cosignature, when present). */
export async function fetchCheckpoint(
  api: ServiceApi,
  log: Ed25519NoteVerifier,
  witnesses: readonly CosignatureVerifier[] = [],
): Promise<{ note: string; opened: OpenedCheckpoint }> {
  const { body } = await api.workspaceText('GET', 'ledger/checkpoint');
  return { note: body, opened: openVerified(body, log, witnesses, "the service's checkpoint") };
}

/** What a verified checkpoint states. */
export function checkpointSummary(opened: OpenedCheckpoint): { origin: string; tree_size: number; root_hash: string; other_signatures: string[] } {
  const { origin, size, rootHash } = opened.checkpoint;
  return { origin, tree_size: size, root_hash: rootHash.toString('base64'), other_signatures: opened.unknown.map((s) => s.name) };
}

/** Verifies a checkpoint note. @throws LedgerCheckError naming what does not hold */
export function openVerified(note: string, log: Ed25519NoteVerifier, witnesses: readonly CosignatureVerifier[], what: string): OpenedCheckpoint {
  try {
    return openCheckpoint(note, log, witnesses);
  } catch (error) {
    if (error instanceof LedgerVerificationError || error instanceof LedgerFormatError) {
      throw new LedgerCheckError(`${what} does not verify with the pinned log key ${log.name}: ${error.message}`, {
        hint: 'a checkpoint the log key did not sign means the service or its database is not what signed the log (or the key was rotated: pin the new one)',
      });
    }
    throw error;
  }
}

/** Requires a cosignature from each witness. @throws LedgerCheckError naming the missing ones */
export function requireCosignatures(opened: OpenedCheckpoint, witnesses: readonly CosignatureVerifier[]): void {
  const missing = witnesses.filter((w) => !opened.cosignatures.some((c) => c.name === w.name));
  if (missing.length > 0) {
    throw new LedgerCheckError(`the checkpoint at size ${opened.checkpoint.size} has no cosignature by ${missing.map((w) => w.name).join(', ')}`, {
      hint: 'a required witness has not (yet) seen this tree; without it, nothing shows that others see the same log',
    });
  }
}

/** The hashes of a proof: a list of base64 strings of 32 bytes each. @throws LedgerCheckError */
function proofHashes(value: unknown, what: string): Buffer[] {
  const malformed = () => new LedgerCheckError(`the ${what} proof is not a list of base64 SHA-256 hashes`);
  if (!Array.isArray(value)) throw malformed();
  return value.map((text: unknown) => {
    const bytes = typeof text === 'string' ? Buffer.from(text, 'base64') : undefined;
    if (bytes === undefined || bytes.length !== 32 || bytes.toString('base64') !== text) throw malformed();
    return bytes;
  });
}

/**
 * Checks that the tree of `to` extends the tree of `from` (both verified), with the service's
 * consistency proof. Names a shrunk log, a fork at the same size and a rewritten history.
 */
export async function checkConsistency(api: ServiceApi, from: OpenedCheckpoint, to: OpenedCheckpoint): Promise<void> {
  const a = from.checkpoint;
  const b = to.checkpoint;
  if (a.origin !== b.origin) throw new LedgerCheckError(`the checkpoint is for ${shown(b.origin)}, the earlier one for ${shown(a.origin)}`);
  if (b.size < a.size) {
    throw new LedgerCheckError(`the log shrank from ${a.size} to ${b.size} leaves: records were removed or the database was rolled back to an older copy`);
  }
  if (b.size === a.size) {
    if (!a.rootHash.equals(b.rootHash))
      throw new LedgerCheckError(`two different roots for the same size ${a.size}: the log forked (its history was rewritten or two copies diverged)`);
    return;
  }
  const { body } = await api.workspaceText('GET', `ledger/proof/consistency?from=${a.size}&to=${b.size}`);
  const proof = readReply(body, `the consistency proof from ${a.size} to ${b.size}`, { required: ['from', 'to', 'hashes'] });
  if (!verifyConsistency(a.size, b.size, proofHashes(proof.hashes, 'consistency'), a.rootHash, b.rootHash)) {
    throw new LedgerCheckError(
      `the tree of size ${b.size} does not extend the one of size ${a.size}: the log's history was rewritten (records changed, removed or reordered) or it forked`,
    );
  }
}

/** The members of an inclusion proof (GET ledger/proof/inclusion). */
const INCLUSION = { required: ['id', 'leaf_index', 'tree_size', 'entry', 'hashes'] };

/** A leaf proven included in a verified checkpoint. */
export interface IncludedLeaf {
  leaf_index: number;
  /** the entry text, as hashed into the leaf */
  entry: string;
  parsed: LedgerEntry;
}

/**
 * The answer to GET ledger/proof/inclusion?id=…&tree_size=N: 200 with a proof, 202 while the leaf
 * is not integrated yet (with Retry-After), 404 when the log holds no entry for the id.
 */
export type InclusionAnswer = { status: 'proof'; body: string } | { status: 'pending'; retryAfter?: string } | { status: 'absent' };

export async function askInclusion(api: ServiceApi, id: string, treeSize?: number): Promise<InclusionAnswer> {
  const query = `ledger/proof/inclusion?id=${encodeURIComponent(id)}${treeSize !== undefined ? `&tree_size=${treeSize}` : ''}`;
  try {
    const reply = await api.workspaceText('GET', query);
    if (reply.status === 202) return { status: 'pending', ...(reply.retryAfter !== undefined ? { retryAfter: reply.retryAfter } : {}) };
    return { status: 'proof', body: reply.body };
  } catch (error) {
    if (error instanceof NotFoundError) return { status: 'absent' };
    throw error;
  }
}

/**
 * Verifies an inclusion proof's body against a verified checkpoint: the proof is for that tree,
 * leads from the entry it carries to the checkpoint's root, and the entry is the one of `id` in
 * `workspaceId`. Any 200 body that does not do all of this fails.
 * @throws LedgerCheckError naming what does not hold
 */
export function verifyInclusionProof(body: string, opened: OpenedCheckpoint, id: string, workspaceId: string): IncludedLeaf {
  const { size, rootHash } = opened.checkpoint;
  const proof = readReply(body, `the inclusion proof of ${shown(id)}`, INCLUSION);
  const leafIndex = wholeNumber(proof.leaf_index);
  if (leafIndex === undefined || wholeNumber(proof.tree_size) === undefined || typeof proof.entry !== 'string' || proof.id !== id)
    throw new LedgerCheckError(`the inclusion proof of ${shown(id)} is not a proof the service writes (its id, leaf_index, tree_size or entry)`);
  if (proof.tree_size !== size)
    throw new LedgerCheckError(`the service answered a proof of ${shown(id)} for size ${canonicalize(proof.tree_size)}, not the checkpoint's ${size}`);
  if (leafIndex >= size) throw new LedgerCheckError(`leaf ${leafIndex} is beyond the signed checkpoint's size ${size}`);
  let parsed: LedgerEntry;
  try {
    parsed = parseLedgerEntry(proof.entry);
  } catch (error) {
    throw new LedgerCheckError(`the log entry of ${shown(id)} is malformed: ${(error as Error).message}`);
  }
  if (parsed.id !== id) throw new LedgerCheckError(`the log entry at leaf ${leafIndex} is for ${shown(parsed.id)}, not ${shown(id)}`);
  if (parsed.workspace_id !== workspaceId)
    throw new LedgerCheckError(`the log entry of ${shown(id)} is for workspace ${shown(parsed.workspace_id)}, not ${shown(workspaceId)}`);
  if (!verifyInclusion(leafIndex, size, leafHash(proof.entry), proofHashes(proof.hashes, 'inclusion'), rootHash)) {
    throw new LedgerCheckError(
      `the inclusion proof of ${shown(id)} (leaf ${leafIndex}) does not lead to the root of the signed checkpoint at size ${size}: the log's stored tree was altered, or the proof is made up`,
    );
  }
  return { leaf_index: leafIndex, entry: proof.entry, parsed };
}
