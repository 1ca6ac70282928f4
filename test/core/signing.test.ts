import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { createHmac } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha512';
import { describe, expect, it } from 'vitest';
import { canonicalize, JsonFloat, parseJsonLossless } from '../../src/core/canonical-json.js';
import {
  clientSigMessage,
  hexDigestsEqual,
  legacyWitnessMessage,
  signClientSig,
  signWitness,
  SigningKey,
  SigningKeyError,
  verifyClientSig,
  verifyEd25519,
  verifyWitness,
  witnessMessage,
  witnessTexts,
} from '../../src/core/signing/index.js';
import { hashValue, sha256Hex, sha256Stream } from '../../src/core/hashing.js';

ed.etc.sha512Sync = (...messages) => sha512(ed.etc.concatBytes(...messages));

interface HmacVector {
  name: string;
  key_hex: string;
  workspace_id: string;
  record_json: string;
  message: string;
  client_sig: string;
}
interface WitnessVector {
  name: string;
  form: 'canonical' | 'legacy';
  seed_hex: string;
  public_key_hex: string;
  workspace_id: string;
  attestation_json: string;
  message: string;
  signature_hex: string;
}
interface RfcVector {
  name: string;
  seed_hex: string;
  public_key_hex: string;
  message_hex: string;
  signature_hex: string;
}

const vectors = JSON.parse(readFileSync(new URL('../vectors/signatures.json', import.meta.url), 'utf8')) as {
  hmac_sha256: HmacVector[];
  ed25519_witness: WitnessVector[];
  ed25519_rfc8032: RfcVector[];
};

const asRecord = (text: string) => parseJsonLossless(text) as Record<string, unknown>;

describe('client_sig (HMAC-SHA256, docs/wire-format.md "client_sig") against vectors made by Python', () => {
  it.each(vectors.hmac_sha256.map((v) => [v.name, v] as const))('%s: message and signature are byte-identical', (_name, vector) => {
    const record = asRecord(vector.record_json);
    const key = SigningKey.fromHex(vector.key_hex);
    expect(clientSigMessage(record, vector.workspace_id)).toBe(vector.message);
    expect(signClientSig(record, vector.workspace_id, key)).toBe(vector.client_sig);
    expect(verifyClientSig({ ...record, client_sig: vector.client_sig }, vector.workspace_id, key)).toBe(true);
  });

  it('agrees with an HMAC computed independently by node:crypto', () => {
    const vector = vectors.hmac_sha256[0];
    const independent = createHmac('sha256', Buffer.from(vector.key_hex, 'hex')).update(Buffer.from(vector.message, 'utf8')).digest('hex');
    expect(independent).toBe(vector.client_sig);
  });

  it('fails verification when the payload, workspace or key changes', () => {
    const vector = vectors.hmac_sha256[0];
    const record = { ...asRecord(vector.record_json), client_sig: vector.client_sig };
    const key = SigningKey.fromHex(vector.key_hex);
    expect(verifyClientSig({ ...record, payload: { changed: true } }, vector.workspace_id, key)).toBe(false);
    expect(verifyClientSig(record, 'ws_other', key)).toBe(false);
    expect(verifyClientSig(record, vector.workspace_id, SigningKey.generate().key)).toBe(false);
    expect(verifyClientSig({ ...record, client_sig: 'zz' }, vector.workspace_id, key)).toBe(false);
    expect(verifyClientSig({ ...record, client_sig: undefined }, vector.workspace_id, key)).toBe(false);
  });

  it('refuses to sign a record without occurred_at, and never verifies one', () => {
    const key = SigningKey.generate().key;
    const record = { record_type: 'change_event', system_name: 's', payload: {} };
    expect(() => signClientSig(record, 'ws_1', key)).toThrow(/occurred_at/);
    expect(verifyClientSig({ ...record, client_sig: '0'.repeat(64) }, 'ws_1', key)).toBe(false);
  });

  it('compares digests in constant time only when lengths match, ignoring hex case', () => {
    expect(hexDigestsEqual('abcd', 'ABCD')).toBe(true);
    expect(hexDigestsEqual('abcd', 'abce')).toBe(false);
    expect(hexDigestsEqual('abcd', 'abcdef')).toBe(false);
    expect(hexDigestsEqual('zzzz', 'zzzz')).toBe(false);
  });
});

describe('witness_sig (Ed25519, docs/wire-format.md) against vectors made by Python cryptography', () => {
  it.each(vectors.ed25519_witness.map((v) => [v.name, v] as const))('%s', (_name, vector) => {
    const attestation = { ...asRecord(vector.attestation_json), witness_sig: vector.signature_hex, verifying_key_hex: vector.public_key_hex };
    const key = SigningKey.fromHex(vector.seed_hex);
    expect(key.publicKeyHex).toBe(vector.public_key_hex);
    if (vector.form === 'canonical') {
      expect(witnessMessage(attestation, vector.workspace_id)).toBe(vector.message);
      // Ed25519 is deterministic: our signature must be the same bytes as Python's.
      expect(signWitness(asRecord(vector.attestation_json), vector.workspace_id, key).witness_sig).toBe(vector.signature_hex);
    } else {
      expect(legacyWitnessMessage(attestation)).toBe(vector.message);
    }
    expect(verifyWitness(attestation, vector.workspace_id)).toBe(vector.form);
  });

  it('rejects a tampered attestation and a signature from another key', () => {
    const vector = vectors.ed25519_witness.find((v) => v.form === 'canonical')!;
    const attestation = { ...asRecord(vector.attestation_json), witness_sig: vector.signature_hex, verifying_key_hex: vector.public_key_hex };
    expect(verifyWitness({ ...attestation, tool_name: 'other' }, vector.workspace_id)).toBeNull();
    expect(verifyWitness(attestation, 'ws_other')).toBeNull();
    const other = SigningKey.generate().key;
    expect(verifyWitness({ ...attestation, verifying_key_hex: other.publicKeyHex }, vector.workspace_id)).toBeNull();
    expect(verifyWitness({ ...attestation, witness_sig: 'not hex' }, vector.workspace_id)).toBeNull();
    expect(verifyWitness({ ...attestation, verifying_key_hex: 'ff'.repeat(32) }, vector.workspace_id)).toBeNull();
  });

  it('signs what @noble/ed25519 verifies independently', () => {
    const { key, hex } = SigningKey.generate();
    const attestation = { system_name: 's', tool_name: 't', input_hash: 'a'.repeat(64), output_hash: 'b'.repeat(64), executed_at: '2026-01-01T00:00:00.000Z' };
    const { witness_sig, verifying_key_hex } = signWitness(attestation, 'ws_1', key);
    expect(verifying_key_hex).toBe(Buffer.from(ed.getPublicKey(Buffer.from(hex, 'hex'))).toString('hex'));
    const message = Buffer.from(witnessMessage(attestation, 'ws_1'), 'utf8');
    expect(ed.verify(witness_sig, message, verifying_key_hex)).toBe(true);
  });
});

describe('witnessTexts: the stored text and the signed message from one canonicalisation', () => {
  const ws = 'ws_0195f000-0000-7000-8000-000000000000';
  const records: Record<string, unknown>[] = [
    { system_name: 's', tool_name: 't', input_hash: 'a'.repeat(64), output_hash: 'b'.repeat(64), schema_version: 2 },
    { system_name: 's', tool_name: 't', witness_sig: 'c'.repeat(128), verifying_key_hex: 'd'.repeat(64), executed_at: '2026-01-01T00:00:00Z' },
    // a workspace_id of the client's: stored as sent, replaced in the message
    { workspace_id: 'ws_other', system_name: 'é→😀', authorised_by: { identity: 'x', session_id: 'q"\\' }, zz: [1, new JsonFloat(85), null, true] },
    { witness_sig: null, verifying_key_hex: null, system_name: 'n', model_id: 'm', a: { b: { c: -0.0 } } },
    // a key with a surrogate pair: code point order differs from code unit order
    { '\ud83d\ude00': 1, '\uff61': 2, system_name: 's' },
  ];
  /** docs/wire-format.md spelled out: the record without witness_sig and verifying_key_hex, with the workspace's id. */
  const signedMessage = (record: Record<string, unknown>) => {
    const { witness_sig: _sig, verifying_key_hex: _key, ...signed } = record;
    return canonicalize({ ...signed, workspace_id: ws });
  };
  it('writes exactly what canonicalize writes for the record and for the signed members', () => {
    for (const record of records) {
      const texts = witnessTexts(record, ws);
      expect(texts.stored).toBe(canonicalize(record));
      expect(texts.message).toBe(signedMessage(record));
      expect(witnessMessage(record, ws)).toBe(texts.message);
    }
  });

  it('agrees on a record read losslessly from JSON text', () => {
    const record = parseJsonLossless('{"tool_name":"t","system_name":"s","n":85.0,"big":12345678901234567890,"e":1e-7,"u":"\\u2028"}') as Record<
      string,
      unknown
    >;
    const texts = witnessTexts(record, ws);
    expect(texts.stored).toBe(canonicalize(record));
    expect(texts.message).toBe(signedMessage(record));
  });
});

describe('Ed25519 against RFC 8032 §7.1', () => {
  it.each(vectors.ed25519_rfc8032.map((v) => [v.name, v] as const))('%s', (_name, vector) => {
    const key = SigningKey.fromHex(vector.seed_hex);
    const message = Buffer.from(vector.message_hex, 'hex');
    expect(key.publicKeyHex).toBe(vector.public_key_hex);
    expect(key.ed25519SignHex(message)).toBe(vector.signature_hex);
    expect(verifyEd25519(message, vector.signature_hex, vector.public_key_hex)).toBe(true);
  });
});

describe('the signing key', () => {
  const hex = 'ab'.repeat(32);

  it('rejects a malformed key naming the setting and never echoing the value', () => {
    for (const bad of ['abc', 'zz'.repeat(32), 'ab'.repeat(33), '']) {
      let error: unknown;
      try {
        SigningKey.fromHex(bad, '--signing-key-file');
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(SigningKeyError);
      expect((error as Error).message).toContain('--signing-key-file');
      if (bad) expect((error as Error).message).not.toContain(bad);
    }
  });

  it('accepts a key file with a trailing newline', () => {
    expect(SigningKey.fromHex(`${hex}\n`).publicKeyHex).toBe(SigningKey.fromHex(hex).publicKeyHex);
  });

  it('never shows its bytes in strings, JSON or inspection', () => {
    const key = SigningKey.fromHex(hex);
    for (const shown of [String(key), JSON.stringify({ key }), inspect(key), inspect({ nested: { key } })]) {
      expect(shown).not.toContain(hex);
      expect(shown).toContain('redacted');
    }
  });

  it('generates distinct 32-byte keys', () => {
    const a = SigningKey.generate().hex;
    const b = SigningKey.generate().hex;
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).not.toBe(b);
  });
});

describe('hashing', () => {
  it('hashes strings and bytes as SHA-256 (FIPS 180-2 "abc")', () => {
    const abc = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
    expect(sha256Hex('abc')).toBe(abc);
    expect(sha256Hex(new TextEncoder().encode('abc'))).toBe(abc);
  });

  it('streams chunks to the same digest and counts the bytes', async () => {
    async function* chunks() {
      yield Buffer.from('a');
      yield 'bc';
    }
    const seen: number[] = [];
    const result = await sha256Stream(chunks(), (bytes) => seen.push(bytes));
    expect(result).toEqual({ hash: sha256Hex('abc'), bytes: 3 });
    expect(seen).toEqual([1, 3]);
  });

  it('hashes structured values by their canonical form, so key order does not matter', () => {
    expect(hashValue({ b: 1, a: [1, 'x'] })).toBe(hashValue({ a: [1, 'x'], b: 1 }));
    expect(hashValue({ a: 1 })).toBe(sha256Hex('{"a":1}'));
    expect(hashValue(undefined)).toBe(sha256Hex('null'));
  });
});
