/**
 * `ledger prove`: one record is in the log exactly as the service returns it. Three steps: the
 * checkpoint verifies with the pinned key; the inclusion proof leads from the record's entry to its
 * root; the record, read strictly and held to the members the service writes, hashes to what the
 * entry commits to.
 */
import type { Ed25519NoteVerifier } from '../../core/ledger/index.js';
import type { ServiceApi } from '../api.js';
import { LedgerCheckError, NotFoundError } from '../errors.js';
import { askInclusion, fetchCheckpoint, verifyInclusionProof } from './log.js';
import { isPlainObject } from '../../core/canonical-json.js';
import { readStoredRecord, recordDigest, storedRecord, type ReadRecord } from './records.js';
import { readReply, shown } from './untrusted.js';

/** Where the service returns a logged record of each kind by id (a policy change is read from the policy log). */
const RECORD_PATHS = { evidence: 'grc/evidence', attestation: 'attestations', verdict: 'gates/verdicts' } as const;

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

/** Waits for a while (the injected clock's sleep in tests). */
export type Sleep = (ms: number) => Promise<void>;

const realSleep: Sleep = (ms) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Times the lookup is asked again while the record is not integrated (the maximum merge delay is 1 s). */
const INTEGRATION_TRIES = 5;

/** Waits (as Retry-After asks, a few times) until the log holds the record's leaf; 404 fails the check. */
async function awaitIntegration(api: ServiceApi, id: string, sleep: Sleep): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const answer = await askInclusion(api, id);
    if (answer.status === 'absent') throw new LedgerCheckError(`the log holds no entry for ${shown(id)}: it was never logged, or its leaf was removed`);
    if (answer.status === 'proof') return;
    if (attempt >= INTEGRATION_TRIES)
      throw new LedgerCheckError(`${shown(id)} is still not integrated into the log after ${attempt} tries (the maximum merge delay is 1 s)`);
    const seconds = Number(answer.retryAfter);
    await sleep(Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 5) * 1000 : 1000);
  }
}

/** Proves that a record is in the log, exactly as the service returns it. @throws LedgerCheckError naming what does not hold */
export async function proveRecord(api: ServiceApi, log: Ed25519NoteVerifier, id: string, workspaceId: string, sleep: Sleep = realSleep): Promise<Proven> {
  await awaitIntegration(api, id, sleep);
  const { opened } = await fetchCheckpoint(api, log);
  const { size, rootHash, origin } = opened.checkpoint;
  const answer = await askInclusion(api, id, size);
  if (answer.status !== 'proof') throw new LedgerCheckError(`the service answers no inclusion proof of ${shown(id)} for its signed checkpoint at size ${size}`);
  const leaf = verifyInclusionProof(answer.body, opened, id, workspaceId);
  const kind = leaf.parsed.kind;
  const deleted = () =>
    new LedgerCheckError(`the service no longer returns ${kind} ${shown(id)}, which the log holds at leaf ${leaf.leaf_index}: the record was deleted`);
  let read: ReadRecord;
  if (kind === 'gate_policy') {
    // a gate policy change: one of the changes of the gate policy log
    const log = readReply((await api.workspaceText('GET', 'grc/gates/policy')).body, 'the gate policy log', { required: ['policy', 'changes'] });
    const change = Array.isArray(log.changes) ? log.changes.find((c) => isPlainObject(c) && c.change_id === id) : undefined;
    if (change === undefined) throw deleted();
    read = storedRecord(change, kind);
  } else {
    const path = `${RECORD_PATHS[kind]}/${encodeURIComponent(id)}`;
    let text: string;
    try {
      text = (await api.workspaceText('GET', path)).body;
    } catch (error) {
      if (error instanceof NotFoundError) throw deleted();
      throw error;
    }
    read = readStoredRecord(text, kind);
  }
  if ('problem' in read) throw new LedgerCheckError(`${kind} ${shown(id)} as the service returns it is not a record the service writes: ${read.problem}`);
  if (read.id !== id) throw new LedgerCheckError(`the service returned ${kind} ${shown(read.id)} when asked for ${shown(id)}`);
  const digest = recordDigest(read.record);
  if (digest !== leaf.parsed.sha256) {
    throw new LedgerCheckError(
      `${kind} ${shown(id)} as the service returns it is not what the log committed to at leaf ${leaf.leaf_index} (sha256 ${digest}, the entry says ${leaf.parsed.sha256}): the stored record was changed`,
    );
  }
  return { id, kind, leaf_index: leaf.leaf_index, tree_size: size, origin, root_hash: rootHash.toString('base64'), entry: leaf.entry };
}
