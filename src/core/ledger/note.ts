/**
 * C2SP signed-note: a UTF-8 text ending in a newline, a blank line, then signature lines
 * `— <key name> <base64(4-byte big-endian key id ‖ signature)>` (U+2014, a space). Key ids are
 * SHA-256(key name ‖ 0x0A ‖ signature type ‖ public key)[:4]; verifier keys are written
 * `<key name>+<8 hex digits of key id>+<base64(signature type ‖ public key)>`.
 *
 * Ed25519 (type 0x01) signing and verification reuse core's signing module: {@link SigningKey}
 * holds the 32-byte seed, {@link verifyEd25519Bytes} verifies with the same strict checks as
 * every other signature govctl verifies. Timestamped cosignatures (type 0x04) are cosignature.ts.
 */
import { createHash } from 'node:crypto';
import { SigningKey } from '../signing/keys.js';
import { verifyEd25519Bytes } from '../signing/ed25519-verifier.js';
import { LedgerFormatError, LedgerVerificationError } from './errors.js';

/** Signature type bytes (signed-note "Signature types"). */
export const SIGNATURE_TYPE_ED25519 = 0x01;
export const SIGNATURE_TYPE_COSIGNATURE_V1 = 0x04;

/**
 * Parsing limits. The specification asks verifiers to accept at least 16 signatures and to bound
 * the count or the size; these bounds are docs/decisions.md's "Formats and their open points".
 */
export const MAX_NOTE_SIGNATURES = 100;
export const MAX_NOTE_BYTES = 1024 * 1024;

const EM_DASH_SPACE = '\u2014 ';
const SIGNER_KEY_PREFIX = 'PRIVATE+KEY+';

/** A signature line of a note, parsed but not verified. */
export interface NoteSignature {
  /** The key name. */
  readonly name: string;
  /** The uint32 key id. */
  readonly keyId: number;
  /** The signature bytes after the key id. */
  readonly signature: Buffer;
  /** The whole line, without its newline. */
  readonly line: string;
}

/** A note split into its signed text (ending in a newline) and its signature lines. */
export interface Note {
  readonly text: string;
  readonly signatures: readonly NoteSignature[];
}

/** Checks one note signature by one key; what {@link openNote} is given. */
export interface NoteVerifier {
  readonly name: string;
  readonly keyId: number;
  /** Whether `signature` (the bytes after the key id) is this key's over `text`. Never throws. */
  verify(text: Uint8Array, signature: Uint8Array): boolean;
}

/** Produces one key's signature (the bytes after the key id) over a note text. */
export interface NoteSigner {
  readonly name: string;
  readonly keyId: number;
  sign(text: Uint8Array): Uint8Array;
}

const UNICODE_SPACE = /[\s\u0085]/u;
const CONTROL = /[\u0000-\u0009\u000b-\u001f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Whether a key name is valid: non-empty, no Unicode space, no `+`, no control character. */
export function isValidKeyName(name: string): boolean {
  return name.length > 0 && !UNICODE_SPACE.test(name) && !name.includes('+') && !CONTROL.test(name) && !LONE_SURROGATE.test(name);
}

function checkKeyName(name: string): void {
  if (!isValidKeyName(name)) throw new LedgerFormatError('a key name must be non-empty, without spaces, plus signs or control characters');
}

/**
 * Strict standard base64 (RFC 4648 §4): padded, no white space, and the unused bits of the last
 * character zero, so that each byte string has exactly one accepted spelling.
 * @throws LedgerFormatError
 */
export function decodeBase64Strict(text: string, what: string): Buffer {
  if (!BASE64.test(text)) throw new LedgerFormatError(`${what} is not base64`);
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64') !== text) throw new LedgerFormatError(`${what} is not canonical base64`);
  return bytes;
}

/** SHA-256(key name ‖ 0x0A ‖ type ‖ public key)[:4] as a uint32. */
export function noteKeyId(name: string, type: number, publicKey: Uint8Array): number {
  return createHash('sha256')
    .update(name, 'utf8')
    .update(Buffer.from([0x0a, type]))
    .update(publicKey)
    .digest()
    .readUInt32BE(0);
}

function hex8(keyId: number): string {
  return keyId.toString(16).padStart(8, '0');
}

/** `<name>+<8 hex digits of key id>+<base64(type ‖ public key)>`. */
export function formatVerifierKey(name: string, type: number, publicKey: Uint8Array): string {
  checkKeyName(name);
  return `${name}+${hex8(noteKeyId(name, type, publicKey))}+${Buffer.concat([Buffer.from([type]), publicKey]).toString('base64')}`;
}

/** `<name>+<key id>+<key>` split at its first two plus signs (base64 key data may contain `+`). */
function splitKey(text: string): [string, string, string] | null {
  const first = text.indexOf('+');
  const second = first < 0 ? -1 : text.indexOf('+', first + 1);
  return second < 0 ? null : [text.slice(0, first), text.slice(first + 1, second), text.slice(second + 1)];
}

/** A verifier key's parts, its key id checked against the name and key it names. */
export interface ParsedVerifierKey {
  readonly name: string;
  readonly keyId: number;
  readonly type: number;
  readonly publicKey: Buffer;
}

/**
 * Parses `<name>+<hex key id>+<base64(type ‖ key)>`. The key id must be the one the name, type and
 * key give (8 lower-case hex digits); Ed25519-based types need a 32-byte key.
 * @throws LedgerFormatError
 */
export function parseVerifierKey(vkey: string): ParsedVerifierKey {
  const parts = splitKey(vkey.trim());
  if (!parts) throw new LedgerFormatError('a verifier key is <name>+<key id>+<key>');
  const [name, idText, keyText] = parts;
  checkKeyName(name);
  if (!/^[0-9a-f]{8}$/.test(idText)) throw new LedgerFormatError('a verifier key id is 8 lower-case hex digits');
  const keyBytes = decodeBase64Strict(keyText, 'the verifier key');
  if (keyBytes.length < 2) throw new LedgerFormatError('the verifier key is too short');
  const type = keyBytes[0];
  const publicKey = keyBytes.subarray(1);
  if ((type === SIGNATURE_TYPE_ED25519 || type === SIGNATURE_TYPE_COSIGNATURE_V1) && publicKey.length !== 32) {
    throw new LedgerFormatError('an Ed25519 verifier key holds a 32-byte public key');
  }
  const keyId = noteKeyId(name, type, publicKey);
  if (hex8(keyId) !== idText) throw new LedgerFormatError('the verifier key id does not match its name and key');
  return { name, keyId, type, publicKey };
}

/** An Ed25519 (type 0x01) note verifier. */
export class Ed25519NoteVerifier implements NoteVerifier {
  readonly keyId: number;

  constructor(
    readonly name: string,
    readonly publicKey: Buffer,
  ) {
    checkKeyName(name);
    if (publicKey.length !== 32) throw new LedgerFormatError('an Ed25519 public key is 32 bytes');
    this.keyId = noteKeyId(name, SIGNATURE_TYPE_ED25519, publicKey);
  }

  /** From a verifier key string of type 0x01. @throws LedgerFormatError */
  static fromVerifierKey(vkey: string): Ed25519NoteVerifier {
    const parsed = parseVerifierKey(vkey);
    if (parsed.type !== SIGNATURE_TYPE_ED25519) throw new LedgerFormatError('not an Ed25519 (type 0x01) verifier key');
    return new Ed25519NoteVerifier(parsed.name, Buffer.from(parsed.publicKey));
  }

  verify(text: Uint8Array, signature: Uint8Array): boolean {
    return signature.length === 64 && verifyEd25519Bytes(text, signature, this.publicKey);
  }

  /** The verifier key string. */
  get verifierKey(): string {
    return formatVerifierKey(this.name, SIGNATURE_TYPE_ED25519, this.publicKey);
  }
}

/** An Ed25519 (type 0x01) note signer: a key name and a {@link SigningKey} seed. */
export class Ed25519NoteSigner implements NoteSigner {
  readonly keyId: number;
  readonly verifier: Ed25519NoteVerifier;

  constructor(
    readonly name: string,
    readonly key: SigningKey,
  ) {
    this.verifier = new Ed25519NoteVerifier(name, Buffer.from(key.publicKeyHex, 'hex'));
    this.keyId = this.verifier.keyId;
  }

  sign(text: Uint8Array): Uint8Array {
    return Buffer.from(this.key.ed25519SignHex(text), 'hex');
  }

  /** The verifier key string to publish. */
  get verifierKey(): string {
    return this.verifier.verifierKey;
  }
}

/**
 * Parses a signer key `PRIVATE+KEY+<name>+<hex key id>+<base64(0x01 ‖ 32-byte seed)>`, the
 * spelling the Go note package and its ecosystem use for Ed25519 signer keys. The error never
 * quotes the key.
 * @throws LedgerFormatError
 */
export function parseSignerKey(skey: string): Ed25519NoteSigner {
  const trimmed = skey.trim();
  const bad = (why: string) => new LedgerFormatError(`not a signer key (${why})`);
  if (!trimmed.startsWith(SIGNER_KEY_PREFIX)) throw bad('expected PRIVATE+KEY+<name>+<key id>+<key>');
  const parts = splitKey(trimmed.slice(SIGNER_KEY_PREFIX.length));
  if (!parts) throw bad('expected PRIVATE+KEY+<name>+<key id>+<key>');
  const [name, idText, keyText] = parts;
  if (!isValidKeyName(name)) throw bad('invalid key name');
  if (!/^[0-9a-f]{8}$/.test(idText)) throw bad('the key id is 8 lower-case hex digits');
  let bytes: Buffer;
  try {
    bytes = decodeBase64Strict(keyText, 'the key');
  } catch {
    throw bad('the key is not base64');
  }
  if (bytes.length !== 33 || bytes[0] !== SIGNATURE_TYPE_ED25519) throw bad('expected an Ed25519 seed');
  const signer = new Ed25519NoteSigner(name, SigningKey.fromHex(bytes.subarray(1).toString('hex'), 'the signer key'));
  bytes.fill(0);
  if (hex8(signer.keyId) !== idText) throw bad('the key id does not match its name and key');
  return signer;
}

/** A new Ed25519 key pair for a key name: the signer key (secret) and the verifier key (public). */
export function generateSignerKey(name: string): { signerKey: string; verifierKey: string } {
  checkKeyName(name);
  const { key, hex } = SigningKey.generate();
  const signer = new Ed25519NoteSigner(name, key);
  const seed = Buffer.from(hex, 'hex');
  const signerKey = `${SIGNER_KEY_PREFIX}${name}+${hex8(signer.keyId)}+${Buffer.concat([Buffer.from([SIGNATURE_TYPE_ED25519]), seed]).toString('base64')}`;
  seed.fill(0);
  return { signerKey, verifierKey: signer.verifierKey };
}

/** Checks a note text: non-empty, ends in a newline, well-formed, no control character but newline. */
function checkText(text: string): void {
  if (text.length === 0 || !text.endsWith('\n')) throw new LedgerFormatError('a note text must end with a newline');
  if (CONTROL.test(text)) throw new LedgerFormatError('a note must not contain control characters other than newline');
  if (LONE_SURROGATE.test(text)) throw new LedgerFormatError('a note must be valid UTF-8');
}

/** One signature line (with its newline) for a key name, key id and signature bytes. */
export function formatSignatureLine(name: string, keyId: number, signature: Uint8Array): string {
  checkKeyName(name);
  const id = Buffer.alloc(4);
  id.writeUInt32BE(keyId >>> 0);
  return `${EM_DASH_SPACE}${name} ${Buffer.concat([id, signature]).toString('base64')}\n`;
}

/** A note from a text and signature lines (each ending in a newline). */
export function formatNote(text: string, signatureLines: readonly string[]): string {
  checkText(text);
  if (signatureLines.length === 0) throw new LedgerFormatError('a signed note has at least one signature');
  return `${text}\n${signatureLines.join('')}`;
}

/** Signs a note text with each signer. @throws LedgerFormatError for a text a note cannot carry */
export function signNote(text: string, signers: readonly NoteSigner[]): string {
  checkText(text);
  const bytes = Buffer.from(text, 'utf8');
  return formatNote(
    text,
    signers.map((signer) => formatSignatureLine(signer.name, signer.keyId, signer.sign(bytes))),
  );
}

function parseSignatureLine(line: string): NoteSignature {
  if (!line.startsWith(EM_DASH_SPACE)) throw new LedgerFormatError('a signature line starts with an em dash and a space');
  const rest = line.slice(EM_DASH_SPACE.length);
  const space = rest.indexOf(' ');
  if (space < 0) throw new LedgerFormatError('a signature line is — <key name> <signature>');
  const name = rest.slice(0, space);
  if (!isValidKeyName(name)) throw new LedgerFormatError('a signature line has an invalid key name');
  const bytes = decodeBase64Strict(rest.slice(space + 1), 'a signature');
  if (bytes.length < 5) throw new LedgerFormatError('a signature is a key id and at least one byte');
  return { name, keyId: bytes.readUInt32BE(0), signature: Buffer.from(bytes.subarray(4)), line };
}

/**
 * Splits a note into its text and signature lines, strictly: valid UTF-8, no control character
 * but newline, the text separated from the signatures by the last blank line, every signature
 * line well-formed and newline-terminated, at most {@link MAX_NOTE_SIGNATURES} signatures and
 * {@link MAX_NOTE_BYTES} bytes. Verifies nothing.
 * @throws LedgerFormatError
 */
export function parseNote(note: string | Uint8Array): Note {
  let text: string;
  if (typeof note === 'string') {
    if (Buffer.byteLength(note, 'utf8') > MAX_NOTE_BYTES) throw new LedgerFormatError(`a note is at most ${MAX_NOTE_BYTES} bytes`);
    if (LONE_SURROGATE.test(note)) throw new LedgerFormatError('a note must be valid UTF-8');
    text = note;
  } else {
    if (note.length > MAX_NOTE_BYTES) throw new LedgerFormatError(`a note is at most ${MAX_NOTE_BYTES} bytes`);
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(note);
    } catch {
      throw new LedgerFormatError('a note must be valid UTF-8');
    }
  }
  if (CONTROL.test(text)) throw new LedgerFormatError('a note must not contain control characters other than newline');
  const split = text.lastIndexOf('\n\n');
  if (split < 0) throw new LedgerFormatError('a note has a blank line between its text and its signatures');
  const body = text.slice(0, split + 1);
  const block = text.slice(split + 2);
  if (block.length === 0 || !block.endsWith('\n')) throw new LedgerFormatError('a note ends with newline-terminated signature lines');
  const lines = block.slice(0, -1).split('\n');
  if (lines.length > MAX_NOTE_SIGNATURES) throw new LedgerFormatError(`a note has at most ${MAX_NOTE_SIGNATURES} signatures`);
  return { text: body, signatures: lines.map(parseSignatureLine) };
}

/** A note whose signatures were checked against known keys. */
export interface OpenedNote extends Note {
  /** Signatures by the known keys that verified (one per key). */
  readonly verified: readonly { signature: NoteSignature; verifier: NoteVerifier }[];
  /** Signatures by keys not among the known ones, ignored as signed-note requires. */
  readonly unknown: readonly NoteSignature[];
}

/**
 * Parses a note and verifies it against known keys: a signature counts when its key name and key
 * id both match a known key; every such signature must verify (a bad one rejects the whole note)
 * and at least one must; signatures from unknown keys are ignored.
 * @throws LedgerFormatError for a malformed note
 * @throws LedgerVerificationError when a known key's signature fails or none is present
 */
export function openNote(note: string | Uint8Array, verifiers: readonly NoteVerifier[]): OpenedNote {
  const parsed = parseNote(note);
  const bytes = Buffer.from(parsed.text, 'utf8');
  const verified: { signature: NoteSignature; verifier: NoteVerifier }[] = [];
  const unknown: NoteSignature[] = [];
  for (const signature of parsed.signatures) {
    const verifier = verifiers.find((v) => v.name === signature.name && v.keyId === signature.keyId);
    if (!verifier) {
      unknown.push(signature);
      continue;
    }
    if (!verifier.verify(bytes, signature.signature)) throw new LedgerVerificationError(`the signature by ${signature.name} does not verify`);
    if (!verified.some((entry) => entry.verifier === verifier)) verified.push({ signature, verifier });
  }
  if (verified.length === 0) throw new LedgerVerificationError('the note carries no signature by a known key');
  return { ...parsed, verified, unknown };
}
