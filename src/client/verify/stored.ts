/**
 * Stored records as `evidence verify --remote` and `attest verify --remote` read them: a page at a
 * time, each item read strictly (records.ts), so an item that is not one the service writes is a
 * named failure of that item, not a parse error, and a list that comes back to a page it returned
 * ends with a LedgerCheckError instead of running for ever.
 */
import type { ServiceApi } from '../api.js';
import { LedgerCheckError } from '../errors.js';
import { storedRecord, type ReadRecord } from './records.js';
import { readReply, shown } from './untrusted.js';

/** The stored attestations `query` selects (GET attestations), a page of read items at a time. */
export async function* storedAttestations(api: ServiceApi, query: Record<string, string | number | undefined>): AsyncGenerator<ReadRecord[]> {
  const cursors = new Set<string>();
  for (let cursor = query.cursor === undefined ? undefined : String(query.cursor); ;) {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries({ ...query, cursor })) if (value !== undefined) params.set(name, String(value));
    const { body } = await api.workspaceText('GET', `attestations?${params.toString()}`);
    const list = readReply(body, 'the attestation list', { required: ['attestations'], optional: ['next_cursor'] });
    if (!Array.isArray(list.attestations)) throw new LedgerCheckError('the attestation list holds no list of attestations');
    yield list.attestations.map((item) => storedRecord(item, 'attestation'));
    const next = typeof list.next_cursor === 'string' ? list.next_cursor : undefined;
    if (next === undefined || list.attestations.length === 0) return;
    if (cursors.has(next)) throw new LedgerCheckError(`the attestation list came back to a page it had returned (after ${shown(next)})`);
    cursors.add(next);
    cursor = next;
  }
}
