/**
 * The write path's shortcuts give exactly what the long way gives:
 * - a stored evidence record's log leaf commits to the canonical JSON of its view, written as one
 *   template (payload and mapped controls spliced in as stored when canonical);
 * - a stored attestation's log leaf commits to the canonical JSON of its view (what GET returns),
 *   now written directly instead of writing the view, parsing it back and canonicalising it;
 * - a system's record types and controls, unioned in SQL only when a group brings one not yet
 *   stored, equal the union over every stored record (what a query over every record computes from scratch).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  buildAttestation,
  canonicalize,
  parseJsonLossless,
  SigningKey,
  signWitness,
  witnessJob,
  witnessTexts,
  type WitnessForm,
} from '../../src/core/index.js';
import { provision } from '../../src/server/index.js';
import type { AttestationRow } from '../../src/server/store/rows.js';
import { openStore } from '../../src/server/store/open-store.js';
import type { Store } from '../../src/server/store/store.js';
import { testStoreLocation } from '../helpers/backend.js';
import {
  attestationCanonical,
  attestationSha256,
  attestationView,
  evidenceCanonical,
  evidenceView,
  signatureFacts,
} from '../../src/server/store/record-views.js';
import { storedAttestationRow, storedEvidenceRow } from '../helpers/service-requests.js';

const WS = 'ws_0000000000000000000000000000';

/** A stored attestation row for `record` as the service builds it (its canonical text as stored). */
function rowOf(record: Record<string, unknown>, fields: Partial<AttestationRow> = {}): AttestationRow {
  return storedAttestationRow({
    attestation_id: 'att_0192f0e0-0000-7000-8000-000000000001',
    workspace_id: WS,
    system_name: String(record.system_name),
    tool_name: String(record.tool_name),
    input_hash: String(record.input_hash),
    output_hash: String(record.output_hash),
    executed_at: typeof record.executed_at === 'string' ? record.executed_at : '2026-11-24T00:00:00.000Z',
    executed_ms: 0,
    record: witnessTexts(record, WS).stored,
    received_at: '2026-11-24T01:02:03.456Z',
    received_ms: 0,
    ...fields,
  });
}

/** The definition: the canonical JSON of the view as served, read losslessly. */
const byDefinition = (row: AttestationRow) => canonicalize(parseJsonLossless(attestationView(row, row.workspace_id)));

describe('attestationCanonical', () => {
  const { key } = SigningKey.generate();
  const base: Record<string, unknown> = buildAttestation({
    systemName: 'scorer',
    agentName: 'agent',
    toolName: 'tool',
    inputHash: 'a'.repeat(64),
    outputHash: 'b'.repeat(64),
    executedAt: '2026-11-24T00:00:00.000Z',
    modelId: 'model-1',
    authorisedBy: { identity: 'ci@example.com', role: 'pipeline', sessionId: 'run-1' },
  }) as unknown as Record<string, unknown>;

  it('equals the canonical JSON of the served view for signed, legacy, unsigned and declared attestations', () => {
    const signed = { ...base, ...signWitness(base, WS, key) };
    const cases: AttestationRow[] = [
      rowOf(signed, { witness_form: 'canonical', trust_tier: 'witnessed', key_fingerprint: 'f'.repeat(64) }),
      rowOf(signed, { witness_form: 'legacy', trust_tier: 'declared', tier_reason: 'legacy_form', key_fingerprint: 'f'.repeat(64) }),
      // stored before schema 8: no fingerprint, computed from the key
      rowOf(signed, { witness_form: 'canonical', trust_tier: 'witnessed' }),
      rowOf(signed, { witness_form: 'canonical', trust_tier: 'declared', tier_reason: 'unregistered_key', key_fingerprint: 'e'.repeat(64) }),
      rowOf(base),
      // numbers as sent (lossless), non-ASCII and escapes in names and extra members, no executed_at
      rowOf(
        {
          ...signWitness({ ...base, executed_at: undefined }, WS, key),
          ...base,
          executed_at: undefined,
          system_name: 'scörer "β" \u2028',
          tool_name: 'tool\\x',
          extra: { score: parseJsonLossless('1.0'), big: parseJsonLossless('12345678901234567890'), tiny: parseJsonLossless('1e-7') },
        },
        { witness_form: 'canonical', trust_tier: 'witnessed', system_name: 'scörer "β" \u2028', tool_name: 'tool\\x' },
      ),
    ];
    for (const row of cases) expect(attestationCanonical(row, row.workspace_id)).toBe(byDefinition(row));
  });

  it('equals the definition when the route gives its signature facts instead of the record being read back', () => {
    const signed = { ...base, ...signWitness(base, WS, key) };
    const noTime = {
      ...signWitness({ ...base, executed_at: undefined }, WS, key),
      ...base,
      executed_at: undefined,
      extra: { score: parseJsonLossless('1.0') },
    };
    const keyOnly = { ...base, verifying_key_hex: signed.verifying_key_hex };
    const cases: [Record<string, unknown>, WitnessForm | null, Partial<AttestationRow>][] = [
      [signed, 'canonical', { witness_form: 'canonical', trust_tier: 'witnessed', key_fingerprint: 'f'.repeat(64) }],
      [signed, 'legacy', { witness_form: 'legacy', trust_tier: 'declared', tier_reason: 'legacy_form', key_fingerprint: 'f'.repeat(64) }],
      [noTime, 'canonical', { witness_form: 'canonical', trust_tier: 'witnessed', key_fingerprint: 'f'.repeat(64) }],
      [base, null, {}],
      // a key without a signature: no fingerprint stored, the view computes it from the key
      [keyOnly, null, {}],
    ];
    for (const [record, form, fields] of cases) {
      const row = rowOf(record, fields);
      const job = witnessJob(record, WS, witnessTexts(record, WS).message);
      const withFacts = { ...row, signature_facts: signatureFacts(record, job, form) };
      expect(attestationCanonical(row, WS, withFacts.signature_facts)).toBe(byDefinition(row));
      expect(attestationSha256(withFacts)).toBe(attestationSha256(row));
    }
  });

  it('fails as the definition does on a stored record that no longer parses', () => {
    const row = rowOf(base, { record: '{"system_name":' });
    expect(() => byDefinition(row)).toThrow();
    expect(() => attestationCanonical(row, row.workspace_id)).toThrow();
  });
});

describe('evidenceCanonical', () => {
  it('equals the canonical JSON of the served view, with members present or absent, escapes and odd control lists', () => {
    const payload = canonicalize(parseJsonLossless('{"z":1.0,"a":[12345678901234567890,1e-7,"é\\u2028"],"m":{"y":null,"b":true}}'));
    const base = storedEvidenceRow({ workspaceId: WS, recordId: 'rec_0192f0e0-0000-7000-8000-000000000001', occurredMs: 1_790_000_000_000 });
    const rows = [
      { ...base, payload },
      {
        ...base,
        payload,
        identity: 'ana@example.com',
        resource: 'model "x"',
        environment: 'prod\tuction',
        client_sig: 'ab'.repeat(32),
        client_sig_algo: 'hmac-sha256',
      },
      { ...base, payload, system_name: 'scörer \u2028 β', mapped_controls: '["eu_ai_act:art_9","iso_42001:6.1.2"]' },
      // control lists whose text is not canonical as stored: escapes, non-ASCII, spaces, non-strings
      { ...base, payload, mapped_controls: '["a\\"b","ü"]' },
      { ...base, payload, mapped_controls: '[ "b", "a" ]' },
      { ...base, payload, mapped_controls: '[1.0,"x"]' },
    ];
    for (const row of rows) expect(evidenceCanonical(row)).toBe(canonicalize(parseJsonLossless(evidenceView(row))));
  });
});

describe('systems aggregates across group commits', () => {
  let dir: string;
  let store: Store;
  let workspaceId: string;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'govctl-write-path-'));
    const db = await testStoreLocation('write-path', dir);
    workspaceId = (await provision(db, {})).workspace_id;
    store = await openStore(db, { ledger: {} });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('hold the union of every stored record’s type and controls, whether a group brings new ones or none', async () => {
    const types = ['change_event', 'incident_report', 'model_evaluation'];
    const controlSets = [['c-1', 'c-2'], ['c-2'], ['c-3', 'c-1'], [], ['c-4']];
    let n = 0;
    // what every stored record brings to its system: the union computed here from scratch
    const expected = new Map<string, { record_count: number; types: Set<string>; controls: Set<string> }>();
    // Groups of several writes (committed together), some bringing nothing new, some a new type or control.
    for (let group = 0; group < 12; group++) {
      const writes = [];
      for (let i = 0; i < 4; i++, n++) {
        const controls = controlSets[(group * 3 + i * (group % 3)) % controlSets.length];
        const row = {
          ...storedEvidenceRow({
            workspaceId,
            recordId: `rec_${String(n).padStart(8, '0')}`,
            occurredMs: 1_790_000_000_000 + n,
            system: `sys-${(group + i) % 3}`,
            type: types[(group >> 2) % types.length],
          }),
          mapped_controls: JSON.stringify(controls),
        };
        writes.push(store.recordEvidence({ row, controls }));
        const system = expected.get(row.system_name) ?? { record_count: 0, types: new Set<string>(), controls: new Set<string>() };
        system.record_count += 1;
        system.types.add(row.record_type);
        for (const control of controls) system.controls.add(control);
        expected.set(row.system_name, system);
      }
      await Promise.all(writes);
    }
    const stored = (await store.systems.list(workspaceId))
      .map((s) => ({ name: s.name, record_count: s.record_count, record_types: JSON.parse(s.record_types), controls: JSON.parse(s.controls) }))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    const sorted = (values: Set<string>) => [...values].sort();
    expect(stored).toEqual(
      [...expected.entries()]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([name, s]) => ({ name, record_count: s.record_count, record_types: sorted(s.types), controls: sorted(s.controls) })),
    );
    expect(stored.length).toBe(3);
  });
});
