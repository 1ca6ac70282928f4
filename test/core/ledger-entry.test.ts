/**
 * govctl's leaf entry (version 1) against test/core/ledger_reference.py, which writes it with
 * Python's own `json.dumps(sort_keys=True, separators=(',', ':'))`: the record digest, the entry
 * bytes and the leaf hash; then the strict entry reader and the log origin.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_LOG_ORIGIN_PREFIX,
  LEDGER_ENTRY_VERSION,
  ledgerEntry,
  ledgerOrigin,
  leafHash,
  LedgerFormatError,
  parseLedgerEntry,
  recordSha256,
  type LedgerEntryKind,
} from '../../src/core/ledger/index.js';
import { runReference } from './ledger-python.js';

const WORKSPACE = 'ws-7f3a';
const RECORDS: { kind: LedgerEntryKind; record: Record<string, unknown> }[] = [
  {
    kind: 'evidence',
    record: {
      id: 'ev_01HZX',
      received_at: '2026-11-23T23:00:00.123Z',
      record_type: 'model_eval',
      identity: 'svc-ci',
      resource: 'models/credit-risk',
      environment: 'prod',
      mapped_controls: ['EU-AI-ACT-15', 'NIST-MEASURE-2.3'],
      source: { tool: 'govctl', version: '1.4.0' },
      payload: { accuracy: 0.9125, threshold: 1e-7, samples: 12000, note: 'Zürich — ✓ 𝄞' },
    },
  },
  {
    kind: 'attestation',
    record: {
      id: 'att_42',
      received_at: '2026-11-23T23:00:01Z',
      input_hash: 'a'.repeat(64),
      output_hash: 'b'.repeat(64),
      executed_at: '2026-11-23T22:59:59Z',
      witness_sig: 'c'.repeat(128),
      tags: [],
    },
  },
];

interface EntriesAnswer {
  entries: { sha256: string; entry: string; leaf: string }[];
}

const reference = runReference<EntriesAnswer>({ entries: RECORDS.map((r) => ({ ...r, workspace_id: WORKSPACE })) });
let answer: EntriesAnswer['entries'];
beforeAll(async () => {
  answer = (await reference).entries;
}, 30_000);

const entryOf = ({ kind, record }: (typeof RECORDS)[number]) =>
  ledgerEntry({ kind, id: record.id as string, workspace_id: WORKSPACE, received_at: record.received_at as string, sha256: recordSha256(record) });

describe(`ledger entry, version ${LEDGER_ENTRY_VERSION}`, () => {
  it('the record digest, the entry bytes and the leaf hash are the reference’s', () => {
    RECORDS.forEach((r, i) => {
      expect(recordSha256(r.record)).toBe(answer[i].sha256);
      expect(entryOf(r)).toBe(answer[i].entry);
      expect(leafHash(entryOf(r)).toString('hex')).toBe(answer[i].leaf);
    });
    expect(entryOf(RECORDS[1])).toMatch(
      /^\{"id":"att_42","kind":"attestation","received_at":"2026-11-23T23:00:01Z","sha256":"[0-9a-f]{64}","workspace_id":"ws-7f3a"\}$/,
    );
  });

  it('any change to any stored member changes the entry', () => {
    const base = entryOf(RECORDS[0]);
    for (const key of Object.keys(RECORDS[0].record)) {
      if (key === 'id' || key === 'received_at') continue;
      const changed = { ...RECORDS[0].record, [key]: key === 'mapped_controls' ? ['EU-AI-ACT-15'] : 'changed' };
      expect(entryOf({ kind: 'evidence', record: changed }), key).not.toBe(base);
    }
  });

  it('reads back only its own canonical bytes', () => {
    const text = entryOf(RECORDS[0]);
    expect(parseLedgerEntry(text)).toEqual(JSON.parse(text));
    expect(parseLedgerEntry(Buffer.from(text))).toEqual(JSON.parse(text));
    const parsed = JSON.parse(text) as Record<string, string>;
    const bad = [
      JSON.stringify(parsed, null, 1),
      JSON.stringify({ kind: parsed.kind, id: parsed.id, received_at: parsed.received_at, sha256: parsed.sha256, workspace_id: parsed.workspace_id }),
      text.replace(/"sha256":"([0-9a-f]{64})"/, (_, h: string) => `"sha256":"${h.toUpperCase()}"`),
      text.replace('"kind":"evidence"', '"kind":"record"'),
      text.replace('}', ',"v":2}'),
      text.replace(/,"workspace_id":"[^"]*"/, ''),
      '[]',
      'not json',
    ];
    for (const b of bad) expect(() => parseLedgerEntry(b), b).toThrow(LedgerFormatError);
  });
});

describe('log origin', () => {
  it('is <prefix>/<workspace id>, schema-less and a valid key name', () => {
    expect(ledgerOrigin(DEFAULT_LOG_ORIGIN_PREFIX, WORKSPACE)).toBe('govctl.local/ledger/ws-7f3a');
    expect(ledgerOrigin('evidence.example.com/log/', WORKSPACE)).toBe('evidence.example.com/log/ws-7f3a');
    for (const [prefix, ws] of [
      ['https://example.com/log', WORKSPACE],
      ['a b', WORKSPACE],
      ['a+b', WORKSPACE],
      ['', WORKSPACE],
      ['x', ''],
      ['x', 'ws 1'],
      ['x', 'ws\n1'],
    ]) {
      expect(() => ledgerOrigin(prefix, ws), `${prefix} ${ws}`).toThrow(LedgerFormatError);
    }
  });
});
