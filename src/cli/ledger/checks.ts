/**
 * What `govctl ledger` checks, on what the service sends (all of it untrusted): the checkpoint's
 * signature with the pinned log key, inclusion of a record's entry, the entry's commitment to the
 * record, and consistency between two checkpoints (docs/ledger.md "What each command proves").
 * A check that fails is a {@link LedgerCheckError} (exit 2) naming what failed.
 */
import { terminalText } from '../terminal-text.js';
import {
  canonicalize,
  Ed25519NoteVerifier,
  CosignatureVerifier,
  LedgerFormatError,
  LedgerVerificationError,
  leafHash,
  openCheckpoint,
  parseJsonLossless,
  parseLedgerEntry,
  verifyConsistency,
  verifyInclusion,
  type LedgerEntryKind,
  type OpenedCheckpoint,
} from '../../core/index.js';
import { sha256Hex } from '../../core/hashing.js';
import { NotFoundError } from '../../client/errors.js';
import type { ServiceApi } from '../../client/api.js';
import { ConfigError, LedgerCheckError, UsageError } from '../errors.js';
import type { Factory } from '../factory.js';

export { LedgerCheckError };

/** The pinned log key as a verifier. @throws ConfigError (78) for a malformed one, naming where it came from */
export function logVerifier(vkey: string, where: string): Ed25519NoteVerifier {
  try {
    return Ed25519NoteVerifier.fromVerifierKey(vkey.trim());
  } catch (error) {
    throw new ConfigError(`${where} is not a log verifier key (${(error as Error).message})`, {
      field: 'ledgerKey',
      hint: 'it looks like <origin>+<8 hex digits>+<base64>, as `govctl admin init` prints it',
    });
  }
}

/**
 * The log key pinned by the `ledgerKey` setting (--ledger-key, GOVCTL_LEDGER_KEY, a config file),
 * or undefined when none is set. `govctl ledger` and the ledger tools of `govctl mcp` both take it here.
 * @throws ConfigError (78) for a malformed one, naming where it came from
 */
export async function configuredLogKey(factory: Factory): Promise<Ed25519NoteVerifier | undefined> {
  const settings = await factory.settings();
  if (settings.ledgerKey === undefined) return undefined;
  return logVerifier(settings.ledgerKey, settings.sources.ledgerKey?.name ?? 'the ledgerKey setting');
}

/** The pinned log key, required. @throws ConfigError (78) when none is set or it is malformed */
export async function pinnedLogKey(factory: Factory): Promise<Ed25519NoteVerifier> {
  const log = await configuredLogKey(factory);
  if (log === undefined) {
    throw new ConfigError('no log key is pinned', {
      field: 'ledgerKey',
      hint: 'give --ledger-key KEY or set GOVCTL_LEDGER_KEY to the verifier key `govctl admin init` printed (obtain it from the operator, not from the service)',
    });
  }
  return log;
}

/** Witness keys given with --witness. @throws UsageError (64) for a malformed one */
export function witnessVerifiers(vkeys: readonly string[]): CosignatureVerifier[] {
  return vkeys.map((vkey) => {
    try {
      return CosignatureVerifier.fromVerifierKey(vkey.trim());
    } catch (error) {
      throw new UsageError(`--witness ${terminalText(vkey)} is not a witness verifier key (${(error as Error).message})`, { field: '--witness' });
    }
  });
}

/** GET ledger/checkpoint, verified with the log key (and every given witness's cosignature, when present). */
export async function fetchCheckpoint(
  api: ServiceApi,
  log: Ed25519NoteVerifier,
  witnesses: readonly CosignatureVerifier[] = [],
): Promise<{ note: string; opened: OpenedCheckpoint }> {
  const { body } = await api.workspaceText('GET', 'ledger/checkpoint');
  return { note: body, opened: openVerified(body, log, witnesses, "the service's checkpoint") };
}

/** What a verified checkpoint states, as `ledger checkpoint --json` and the `ledger_checkpoint` tool show it. */
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
      throw new LedgerCheckError(`${what} does not verify with the pinned log key ${log.name}: ${terminalText(error.message)}`, {
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

/** The base64 hashes of a proof, decoded; a malformed one fails the check. */
function proofHashes(value: unknown, what: string): Buffer[] {
  if (!Array.isArray(value) || !value.every((h) => typeof h === 'string')) throw new LedgerCheckError(`the ${what} proof is not a list of base64 hashes`);
  return value.map((h: string) => Buffer.from(h, 'base64'));
}

/**
 * Checks that the tree of `to` extends the tree of `from` (both verified), with the service's
 * consistency proof. Names a shrunk log, a fork at the same size and a rewritten history.
 */
export async function checkConsistency(api: ServiceApi, from: OpenedCheckpoint, to: OpenedCheckpoint): Promise<void> {
  const a = from.checkpoint;
  const b = to.checkpoint;
  if (a.origin !== b.origin) throw new LedgerCheckError(`the checkpoint is for ${terminalText(b.origin)}, the state file's for ${terminalText(a.origin)}`);
  if (b.size < a.size) {
    throw new LedgerCheckError(`the log shrank from ${a.size} to ${b.size} leaves: records were removed or the database was rolled back to an older copy`);
  }
  if (b.size === a.size) {
    if (!a.rootHash.equals(b.rootHash))
      throw new LedgerCheckError(`two different roots for the same size ${a.size}: the log forked (its history was rewritten or two copies diverged)`);
    return;
  }
  const { body } = await api.workspaceText('GET', `ledger/proof/consistency?from=${a.size}&to=${b.size}`);
  const proof = parseJsonLossless(body) as { hashes?: unknown };
  if (!verifyConsistency(a.size, b.size, proofHashes(proof.hashes, 'consistency'), a.rootHash, b.rootHash)) {
    throw new LedgerCheckError(
      `the tree of size ${b.size} does not extend the one of size ${a.size}: the log's history was rewritten (records changed, removed or reordered) or it forked`,
    );
  }
}

/** Where the service returns the record of each kind of leaf, by id. */
const RECORD_PATHS: Record<LedgerEntryKind, string> = { evidence: 'grc/evidence', attestation: 'attestations', verdict: 'gates/verdicts' };

/** What `ledger prove` established. */
export interface Proven {
  id: string;
  kind: string;
  leaf_index: number;
  tree_size: number;
  origin: string;
  root_hash: string;
  entry: string;
}

interface InclusionBody {
  id: string;
  leaf_index: number;
  tree_size: number;
  entry: string;
  hashes: string[];
}

const sleepMs = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * GET proof/inclusion, waiting (as Retry-After asks, a few times) while the record is not
 * integrated yet. A record the log does not hold fails the check.
 */
async function inclusionOf(api: ServiceApi, id: string, treeSize?: number): Promise<InclusionBody> {
  const query = `ledger/proof/inclusion?id=${encodeURIComponent(id)}${treeSize !== undefined ? `&tree_size=${treeSize}` : ''}`;
  for (let attempt = 1; ; attempt++) {
    let reply;
    try {
      reply = await api.workspaceText('GET', query);
    } catch (error) {
      if (error instanceof NotFoundError)
        throw new LedgerCheckError(`the log holds no entry for ${terminalText(id)}: it was never logged, or its leaf was removed`);
      throw error;
    }
    if (reply.status !== 202) return parseJsonLossless(reply.body) as unknown as InclusionBody;
    if (attempt >= 5)
      throw new LedgerCheckError(`${terminalText(id)} is still not integrated into the log after ${attempt} tries (the maximum merge delay is 1 s)`);
    const seconds = Number(reply.retryAfter);
    await sleepMs(Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 5) * 1000 : 1000);
  }
}

/**
 * Proves that a record is in the log, exactly as the service returns it: the checkpoint verifies
 * with the pinned key, the inclusion proof leads from the record's entry to the checkpoint's root,
 * and the entry commits to the SHA-256 of the record's canonical JSON.
 */
export async function proveRecord(api: ServiceApi, log: Ed25519NoteVerifier, id: string, workspaceId: string): Promise<Proven> {
  const first = await inclusionOf(api, id);
  const { opened } = await fetchCheckpoint(api, log);
  const { size, rootHash, origin } = opened.checkpoint;
  const proof = first.tree_size === size || first.leaf_index >= size ? first : await inclusionOf(api, id, size);
  if (proof.leaf_index >= size) throw new LedgerCheckError(`leaf ${proof.leaf_index} is beyond the signed checkpoint's size ${size}`);
  if (proof.tree_size !== size) throw new LedgerCheckError(`the service answered a proof for size ${proof.tree_size}, not the checkpoint's ${size}`);

  let entry;
  try {
    entry = parseLedgerEntry(String(proof.entry));
  } catch (error) {
    throw new LedgerCheckError(`the log entry of ${terminalText(id)} is malformed: ${terminalText((error as Error).message)}`);
  }
  if (entry.id !== id) throw new LedgerCheckError(`the log entry at leaf ${proof.leaf_index} is for ${terminalText(entry.id)}, not ${terminalText(id)}`);
  if (entry.workspace_id !== workspaceId)
    throw new LedgerCheckError(`the log entry of ${terminalText(id)} is for workspace ${terminalText(entry.workspace_id)}, not ${terminalText(workspaceId)}`);
  if (!verifyInclusion(proof.leaf_index, size, leafHash(proof.entry), proofHashes(proof.hashes, 'inclusion'), rootHash)) {
    throw new LedgerCheckError(
      `the inclusion proof of ${terminalText(id)} (leaf ${proof.leaf_index}) does not lead to the root of the signed checkpoint at size ${size}: the log's stored tree was altered`,
    );
  }

  const path = `${RECORD_PATHS[entry.kind]}/${encodeURIComponent(id)}`;
  let recordText: string;
  try {
    recordText = (await api.workspaceText('GET', path)).body;
  } catch (error) {
    if (error instanceof NotFoundError)
      throw new LedgerCheckError(
        `the service no longer returns ${entry.kind} ${terminalText(id)}, which the log holds at leaf ${proof.leaf_index}: the record was deleted`,
      );
    throw error;
  }
  const digest = sha256Hex(canonicalize(parseJsonLossless(recordText)));
  if (digest !== entry.sha256) {
    throw new LedgerCheckError(
      `${entry.kind} ${terminalText(id)} as the service returns it is not what the log committed to at leaf ${proof.leaf_index} (sha256 ${digest}, the entry says ${entry.sha256}): the stored record was changed`,
    );
  }
  return { id, kind: entry.kind, leaf_index: proof.leaf_index, tree_size: size, origin, root_hash: rootHash.toString('base64'), entry: proof.entry };
}
