/**
 * C2SP signed-note, tlog-checkpoint and tlog-cosignature against test/core/ledger_reference.py
 * (Python `cryptography`, written from the specification texts): key ids, verifier and signer
 * keys, checkpoint bodies and signed notes byte for byte, signatures and cosignatures verified in
 * both directions, and the strict parsing rules of signed-note.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { SigningKey } from '../../src/core/signing/keys.js';
import {
  CosignatureSigner,
  CosignatureVerifier,
  cosignatureTimestamp,
  Ed25519NoteSigner,
  Ed25519NoteVerifier,
  formatCheckpoint,
  formatSignatureLine,
  generateSignerKey,
  LedgerFormatError,
  LedgerVerificationError,
  MAX_NOTE_SIGNATURES,
  noteKeyId,
  openCheckpoint,
  openNote,
  parseCheckpoint,
  parseNote,
  parseSignerKey,
  parseVerifierKey,
  signCheckpoint,
  signNote,
  leafHash,
  verifyInclusion,
  type Checkpoint,
} from '../../src/core/ledger/index.js';
import { createHash } from 'node:crypto';
import { runReference } from './ledger-python.js';

const LOG_SEED = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const WITNESS_SEED = '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb';
const ORIGIN = 'govctl.local/ledger/ws-demo';
const WITNESS = 'witness.example/w1';
const FRESH_ORIGIN = 'python.example/ledger/fresh';

const sha = (text: string) => createHash('sha256').update(text).digest();
const CHECKPOINTS = [
  { size: 0, root: sha('').toString('hex'), extensions: [] as string[], timestamp: 0 },
  { size: 1, root: sha('one').toString('hex'), extensions: [], timestamp: 1_700_000_000 },
  { size: 1_000_003, root: sha('million').toString('hex'), extensions: [], timestamp: 1_763_942_400 },
  { size: 20_852_163, root: sha('sofa').toString('hex'), extensions: ['govctl-extension value'], timestamp: 9_007_199_254_740_991 },
];

const logSigner = new Ed25519NoteSigner(ORIGIN, SigningKey.fromHex(LOG_SEED));
const checkpointOf = (c: (typeof CHECKPOINTS)[number]): Checkpoint => ({
  origin: ORIGIN,
  size: c.size,
  rootHash: Buffer.from(c.root, 'hex'),
  extensions: c.extensions,
});
const cosignerAt = (timestamp: number) => new CosignatureSigner(WITNESS, SigningKey.fromHex(WITNESS_SEED), () => timestamp);

/** Notes the product signs, for Python to verify: each genuine one, then tampered copies. */
const mine = CHECKPOINTS.map((c) => {
  const note = signCheckpoint(checkpointOf(c), [logSigner]);
  return note + cosignerAt(c.timestamp).cosign(formatCheckpoint(checkpointOf(c)));
});
const tamperedSize = mine[2].replace('\n1000003\n', '\n1000004\n');
const tamperedSignature = (() => {
  const lines = mine[1].split('\n');
  const sigLine = lines[lines.length - 2]; // the cosignature line
  const [dash, name, b64] = sigLine.split(' ') as [string, string, string];
  const bytes = Buffer.from(b64, 'base64');
  bytes[bytes.length - 1] ^= 0x01;
  lines[lines.length - 2] = `${dash} ${name} ${bytes.toString('base64')}`;
  return lines.join('\n');
})();

interface NotesAnswer {
  notes: {
    log_key_id: string;
    log_vkey: string;
    log_skey: string;
    witness_vkey: string;
    checkpoints: { body: string; note: string; cosigned: string }[];
    verified: [boolean, boolean][];
    fresh: { vkey: string; witness_vkey: string; note: string };
  };
}

const reference = runReference<NotesAnswer>({
  notes: {
    log_seed: LOG_SEED,
    witness_seed: WITNESS_SEED,
    origin: ORIGIN,
    witness_name: WITNESS,
    fresh_origin: FRESH_ORIGIN,
    checkpoints: CHECKPOINTS,
    verify: [...mine, tamperedSize, tamperedSignature],
  },
});

let answer: NotesAnswer['notes'];
beforeAll(async () => {
  answer = (await reference).notes;
}, 30_000);

describe('keys (signed-note key ids and verifier keys)', () => {
  it('key id, verifier key and signer key agree with the reference for a fixed key', () => {
    expect(logSigner.keyId.toString(16).padStart(8, '0')).toBe(answer.log_key_id);
    expect(logSigner.verifierKey).toBe(answer.log_vkey);
    const parsed = parseSignerKey(answer.log_skey);
    expect(parsed.name).toBe(ORIGIN);
    expect(parsed.verifierKey).toBe(answer.log_vkey);
    expect(cosignerAt(0).verifierKey).toBe(answer.witness_vkey);
    expect(Ed25519NoteVerifier.fromVerifierKey(answer.log_vkey).keyId).toBe(logSigner.keyId);
    expect(CosignatureVerifier.fromVerifierKey(answer.witness_vkey).keyId).toBe(
      noteKeyId(WITNESS, 0x04, Buffer.from(SigningKey.fromHex(WITNESS_SEED).publicKeyHex, 'hex')),
    );
  });

  it('the signer key and signature published with the Go note package reproduce exactly', () => {
    // The example of golang.org/x/mod/sumdb/note (also in the signed_note crate's documentation).
    const signer = parseSignerKey('PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz');
    const text = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
    expect(signNote(text, [signer])).toBe(
      text + '\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n',
    );
  });

  it('refuse a verifier key whose id does not match, of the wrong type, or with a short key', () => {
    const [name, , key] = answer.log_vkey.split('+') as [string, string, string];
    expect(() => parseVerifierKey(`${name}+00000000+${key}`)).toThrow(LedgerFormatError);
    expect(() => parseVerifierKey(`${name}+${answer.log_key_id.toUpperCase()}+${key}`)).toThrow(LedgerFormatError);
    expect(() => CosignatureVerifier.fromVerifierKey(answer.log_vkey)).toThrow(/type 0x04/);
    expect(() => Ed25519NoteVerifier.fromVerifierKey(answer.witness_vkey)).toThrow(/type 0x01/);
    expect(() => parseVerifierKey(`${name}+${answer.log_key_id}+AQID`)).toThrow(LedgerFormatError);
    expect(() => parseVerifierKey(`bad name+${answer.log_key_id}+${key}`)).toThrow(LedgerFormatError);
  });

  it('a generated key pair signs and verifies, and a malformed signer key error never quotes the key', () => {
    const { signerKey, verifierKey } = generateSignerKey(ORIGIN);
    const note = signNote('hello\n', [parseSignerKey(signerKey)]);
    expect(openNote(note, [Ed25519NoteVerifier.fromVerifierKey(verifierKey)]).text).toBe('hello\n');
    // PRIVATE+KEY+<name>+<key id>+<base64 key>: the key is everything after the fourth '+' (base64
    // has '+' of its own, so not after the last one)
    const secret = signerKey.split('+').slice(4).join('+');
    expect(secret).toHaveLength(44);
    const wrongId = signerKey.replace(/\+[0-9a-f]{8}\+/, '+00000000+');
    let message = '';
    try {
      parseSignerKey(wrongId);
    } catch (error) {
      message = String(error);
    }
    expect(message).toMatch(/key id does not match/);
    expect(message).not.toContain(secret);
  });
});

describe('checkpoints (tlog-checkpoint)', () => {
  it('bodies and signed notes are byte-for-byte the reference', () => {
    CHECKPOINTS.forEach((c, i) => {
      expect(formatCheckpoint(checkpointOf(c))).toBe(answer.checkpoints[i].body);
      expect(signCheckpoint(checkpointOf(c), [logSigner])).toBe(answer.checkpoints[i].note);
      expect(mine[i]).toBe(answer.checkpoints[i].cosigned);
    });
  });

  it('the reference verifies what the product signed and rejects the tampered copies', () => {
    expect(answer.verified).toEqual([...CHECKPOINTS.map(() => [true, true]), [false, false], [true, false]]);
  });

  it('the product verifies what the reference signed with a key of its own making', () => {
    const opened = openCheckpoint(answer.fresh.note, Ed25519NoteVerifier.fromVerifierKey(answer.fresh.vkey), [
      CosignatureVerifier.fromVerifierKey(answer.fresh.witness_vkey),
    ]);
    expect(opened.checkpoint.origin).toBe(FRESH_ORIGIN);
    expect(opened.checkpoint.size).toBe(7);
    expect(opened.checkpoint.rootHash).toEqual(sha('fresh'));
    expect(opened.cosignatures.map((c) => [c.name, c.timestamp])).toEqual([[WITNESS, 1_700_000_000]]);
  });

  it('opening a checkpoint parses it and reports the witness cosignatures with their timestamps', () => {
    const log = logSigner.verifier;
    const witness = cosignerAt(0).verifier;
    answer.checkpoints.forEach((c, i) => {
      const opened = openCheckpoint(c.cosigned, log, [witness]);
      expect(opened.checkpoint).toEqual(checkpointOf(CHECKPOINTS[i]));
      expect(opened.cosignatures.map((s) => s.timestamp)).toEqual([CHECKPOINTS[i].timestamp]);
      // Without the witness key the cosignature is an unknown signature, ignored.
      const alone = openCheckpoint(c.cosigned, log);
      expect(alone.cosignatures).toEqual([]);
      expect(alone.unknown.map((s) => s.name)).toEqual([WITNESS]);
    });
  });

  it('refuse a checkpoint without the log signature, with another origin, or with a bad cosignature', () => {
    const witness = cosignerAt(0).verifier;
    expect(() => openCheckpoint(answer.fresh.note, logSigner.verifier)).toThrow(LedgerVerificationError);
    const otherOrigin = signNote(formatCheckpoint({ ...checkpointOf(CHECKPOINTS[1]), origin: 'elsewhere.example/log' }), [logSigner]);
    expect(() => openCheckpoint(otherOrigin, logSigner.verifier)).toThrow(/origin/);
    expect(() => openCheckpoint(tamperedSignature, logSigner.verifier, [witness])).toThrow(/witness\.example\/w1 does not verify/);
    expect(() => openCheckpoint(tamperedSize, logSigner.verifier)).toThrow(LedgerVerificationError);
  });

  it('parse strictly: three non-empty lines at least, a decimal size without leading zeros, a 32-byte canonical base64 root', () => {
    const root = sha('x').toString('base64');
    expect(parseCheckpoint(`o\n0\n${root}\n`).size).toBe(0);
    expect(parseCheckpoint(`o\n5\n${root}\next a\next b\n`).extensions).toEqual(['ext a', 'ext b']);
    for (const bad of [
      `o\n05\n${root}\n`,
      `o\n-1\n${root}\n`,
      `o\n1\n${root}`,
      `o\n1\n`,
      `\n1\n${root}\n`,
      `o\n1\n${root}\n\n`,
      `o\n1\n${sha('x').subarray(1).toString('base64')}\n`,
      `o\n1\n${root.replace('=', '')}\n`,
      `o\n1e3\n${root}\n`,
      `o\n99999999999999999\n${root}\n`,
    ]) {
      expect(() => parseCheckpoint(bad), JSON.stringify(bad)).toThrow(LedgerFormatError);
    }
  });
});

describe('cosignatures (tlog-cosignature, Ed25519 v1)', () => {
  it('carry the timestamp big-endian before the signature, and reject what cannot be one', () => {
    const line = cosignerAt(1_700_000_000).cosign('o\n1\nAAAA\n');
    const bytes = Buffer.from(line.trim().split(' ')[2], 'base64');
    expect(bytes.length).toBe(4 + 8 + 64);
    expect(cosignatureTimestamp(bytes.subarray(4))).toBe(1_700_000_000);
    expect(bytes.subarray(4, 12).toString('hex')).toBe((1_700_000_000).toString(16).padStart(16, '0'));
    const huge = Buffer.from(bytes.subarray(4));
    huge[0] = 0x80; // 2^63 and above is out of the specification's range
    expect(cosignatureTimestamp(huge)).toBeNull();
    expect(cosignatureTimestamp(bytes.subarray(4, 70))).toBeNull();
    // The timestamp is signed: moving it breaks the signature.
    const moved = Buffer.from(bytes.subarray(4));
    moved[7] ^= 1;
    expect(cosignerAt(0).verifier.verify(Buffer.from('o\n1\nAAAA\n'), moved)).toBe(false);
    expect(cosignerAt(0).verifier.verify(Buffer.from('o\n1\nAAAA\n'), bytes.subarray(4))).toBe(true);
  });
});

describe('signed notes: strict parsing (signed-note)', () => {
  const text = 'origin\n1\nAAAA\n';
  const signed = signNote(text, [logSigner]);

  it('split the text from the signatures at the last blank line; the text may hold blank lines', () => {
    const withBlank = signNote('a\n\nb\n', [logSigner]);
    expect(parseNote(withBlank).text).toBe('a\n\nb\n');
    expect(openNote(withBlank, [logSigner.verifier]).text).toBe('a\n\nb\n');
    expect(parseNote(Buffer.from(signed)).signatures[0].name).toBe(ORIGIN);
    // A blank line after the signatures makes them text: the note then has one signature line fewer.
    const line = signed.slice(text.length + 1);
    expect(parseNote(signed + '\n' + line).text).toBe(signed);
  });

  it('refuse malformed notes', () => {
    const line = signed.slice(text.length + 1);
    const bad: [string, string | Uint8Array][] = [
      ['no blank line', text + line],
      ['no signature', text + '\n'],
      ['no final newline', signed.slice(0, -1)],
      ['a hyphen for the em dash', text + '\n' + line.replace('\u2014', '-')],
      ['two spaces', text + '\n' + line.replace(' ', '  ')],
      ['non-canonical base64', text + '\n' + line.replace(/=\n$/, '\n')],
      ['a control character', signed.replace('origin', 'ori\tgin')],
      ['a carriage return', signed.replace('1\n', '1\r\n')],
      ['a short signature', text + '\n\u2014 x AAAAAA==\n'],
      ['a name with a plus', text + '\n' + line.replace(ORIGIN, 'a+b')],
      ['invalid UTF-8', Buffer.concat([Buffer.from('a\xff\n', 'latin1'), Buffer.from('\n' + line)])],
      ['an empty key name', text + '\n' + line.replace(ORIGIN, '')],
    ];
    for (const [why, note] of bad) expect(() => parseNote(note), why).toThrow(LedgerFormatError);
  });

  it('ignore signatures from unknown keys, including a known name with another key id, and reject a bad known one', () => {
    const stranger = new Ed25519NoteSigner(ORIGIN, SigningKey.fromHex('11'.repeat(32)));
    const both = signNote(text, [stranger, logSigner]);
    const opened = openNote(both, [logSigner.verifier]);
    expect(opened.verified.map((v) => v.signature.keyId)).toEqual([logSigner.keyId]);
    expect(opened.unknown.map((s) => s.keyId)).toEqual([stranger.keyId]);
    expect(() => openNote(signNote(text, [stranger]), [logSigner.verifier])).toThrow(/no signature by a known key/);
    const forged = text + '\n' + formatSignatureLine(ORIGIN, logSigner.keyId, stranger.sign(Buffer.from(text)));
    expect(() => openNote(forged, [logSigner.verifier])).toThrow(/does not verify/);
  });

  it(`accept at least 16 signatures and at most ${MAX_NOTE_SIGNATURES}`, () => {
    const line = signed.slice(text.length + 1);
    const unknownLine = formatSignatureLine('other.example', 1, Buffer.alloc(64, 7));
    expect(openNote(text + '\n' + line + unknownLine.repeat(MAX_NOTE_SIGNATURES - 1), [logSigner.verifier]).unknown.length).toBe(MAX_NOTE_SIGNATURES - 1);
    expect(() => parseNote(text + '\n' + line + unknownLine.repeat(MAX_NOTE_SIGNATURES))).toThrow(/at most/);
  });

  it('refuse to sign a text a note cannot carry', () => {
    expect(() => signNote('no newline', [logSigner])).toThrow(LedgerFormatError);
    expect(() => signNote('', [logSigner])).toThrow(LedgerFormatError);
    expect(() => signNote('tab\there\n', [logSigner])).toThrow(LedgerFormatError);
    expect(() => signCheckpoint({ ...checkpointOf(CHECKPOINTS[1]), origin: 'has space' }, [logSigner])).toThrow(LedgerFormatError);
  });
});

describe('docs/ledger.md', () => {
  it('its worked example is what the product computes and verifies', async () => {
    const { readFile } = await import('node:fs/promises');
    const doc = await readFile(new URL('../../docs/ledger.md', import.meta.url), 'utf8');
    const signerKey = /signer key {4}(PRIVATE\+KEY\+\S+)/.exec(doc)![1];
    const verifierKey = /verifier key {2}(\S+)/.exec(doc)![1];
    const witnessKey = /verifier key\n`(witness\.example\/w1\+\S+)`/.exec(doc)![1];
    const note = /at time 1763888400:\n\n```\n([\s\S]*?)```/.exec(doc)![1];
    expect(parseSignerKey(signerKey).verifierKey).toBe(verifierKey);
    expect(signerKey).toContain(Buffer.concat([Buffer.from([1]), Buffer.from(Array.from({ length: 32 }, (_, i) => i + 1))]).toString('base64'));
    const opened = openCheckpoint(note, Ed25519NoteVerifier.fromVerifierKey(verifierKey), [CosignatureVerifier.fromVerifierKey(witnessKey)]);
    expect(opened.cosignatures.map((c) => c.timestamp)).toEqual([1_763_888_400]);
    expect(signCheckpoint(opened.checkpoint, [parseSignerKey(signerKey)])).toBe(note.slice(0, note.lastIndexOf('\n— witness') + 1));
    const entry = /^1 (\{.*\})$/m.exec(doc)![1];
    const proof = (JSON.parse(/inclusion proof of leaf 1 in size 3: `(\[.*?\])`/.exec(doc)![1]) as string[]).map((h) => Buffer.from(h, 'base64'));
    expect(verifyInclusion(1, 3, leafHash(entry), proof, opened.checkpoint.rootHash)).toBe(true);
  });
});
