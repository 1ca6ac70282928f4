/**
 * C2SP tlog-checkpoint: the note body `<origin>\n<tree size>\n<base64 root hash>\n` with optional
 * non-empty extension lines, signed as a signed note whose log key name is the origin.
 */
import { LedgerFormatError, LedgerVerificationError } from './errors.js';
import { HASH_SIZE } from './merkle.js';
import { cosignatureTimestamp, CosignatureVerifier } from './cosignature.js';
import { decodeBase64Strict, isValidKeyName, openNote, signNote, type NoteSignature, type NoteSigner, type NoteVerifier } from './note.js';

/** A log's tree head as a checkpoint states it. */
export interface Checkpoint {
  readonly origin: string;
  readonly size: number;
  readonly rootHash: Buffer;
  readonly extensions: readonly string[];
}

const SIZE = /^(0|[1-9][0-9]*)$/;

/** The checkpoint body (the signed note text). @throws LedgerFormatError for a value a checkpoint cannot carry */
export function formatCheckpoint(checkpoint: Checkpoint): string {
  const { origin, size, rootHash, extensions } = checkpoint;
  if (origin.length === 0 || origin.includes('\n')) throw new LedgerFormatError('a checkpoint origin is one non-empty line');
  if (!Number.isSafeInteger(size) || size < 0) throw new LedgerFormatError('a checkpoint tree size is a non-negative integer');
  if (rootHash.length !== HASH_SIZE) throw new LedgerFormatError('a checkpoint root hash is 32 bytes');
  for (const line of extensions) {
    if (line.length === 0 || line.includes('\n')) throw new LedgerFormatError('a checkpoint extension is one non-empty line');
  }
  return [origin, String(size), rootHash.toString('base64'), ...extensions].map((line) => line + '\n').join('');
}

/**
 * Parses a checkpoint body: at least three non-empty lines, the size in decimal without leading
 * zeros, the root hash 32 bytes in canonical base64, extension lines non-empty.
 * @throws LedgerFormatError
 */
export function parseCheckpoint(body: string): Checkpoint {
  if (!body.endsWith('\n')) throw new LedgerFormatError('a checkpoint body ends with a newline');
  const lines = body.slice(0, -1).split('\n');
  if (lines.length < 3) throw new LedgerFormatError('a checkpoint has an origin, a tree size and a root hash line');
  if (lines.some((line) => line.length === 0)) throw new LedgerFormatError('checkpoint lines are non-empty');
  const [origin, sizeText, rootText, ...extensions] = lines as [string, string, string, ...string[]];
  if (!SIZE.test(sizeText) || !Number.isSafeInteger(Number(sizeText)))
    throw new LedgerFormatError('a checkpoint tree size is a decimal integer without leading zeros');
  const rootHash = decodeBase64Strict(rootText, 'the checkpoint root hash');
  if (rootHash.length !== HASH_SIZE) throw new LedgerFormatError('a checkpoint root hash is 32 bytes');
  return { origin, size: Number(sizeText), rootHash, extensions };
}

/** A checkpoint signed by the log (and any further signers), as note text. */
export function signCheckpoint(checkpoint: Checkpoint, signers: readonly NoteSigner[]): string {
  if (!isValidKeyName(checkpoint.origin)) throw new LedgerFormatError('a govctl log origin is a valid key name');
  return signNote(formatCheckpoint(checkpoint), signers);
}

/** A verified checkpoint, with the witness cosignatures that verified. */
export interface OpenedCheckpoint {
  readonly checkpoint: Checkpoint;
  /** The body the signatures cover. */
  readonly body: string;
  /** Verified witness signatures; `timestamp` is a v1 cosignature's (POSIX seconds), null for other signature types. */
  readonly cosignatures: readonly { name: string; timestamp: number | null; signature: NoteSignature }[];
  /** Signature lines from keys that were not given, ignored. */
  readonly unknown: readonly NoteSignature[];
}

/**
 * Verifies a signed checkpoint: the log's signature must be present and verify, the origin must
 * be the log key's name, and every cosignature by a given witness key must verify (signatures by
 * other keys are ignored). How many witnesses are required is the caller's policy.
 * @throws LedgerFormatError for a malformed note or body
 * @throws LedgerVerificationError when the log's signature is missing or bad, or a witness's is bad
 */
export function openCheckpoint(note: string | Uint8Array, log: NoteVerifier, witnesses: readonly NoteVerifier[] = []): OpenedCheckpoint {
  const opened = openNote(note, [log, ...witnesses]);
  if (!opened.verified.some((entry) => entry.verifier === log)) throw new LedgerVerificationError(`the checkpoint is not signed by the log key ${log.name}`);
  const checkpoint = parseCheckpoint(opened.text);
  if (checkpoint.origin !== log.name) throw new LedgerVerificationError(`the checkpoint origin ${JSON.stringify(checkpoint.origin)} is not the log key's name`);
  const cosignatures = opened.verified
    .filter((entry) => entry.verifier !== log)
    .map((entry) => ({
      name: entry.signature.name,
      timestamp: entry.verifier instanceof CosignatureVerifier ? cosignatureTimestamp(entry.signature.signature) : null,
      signature: entry.signature,
    }));
  return { checkpoint, body: opened.text, cosignatures, unknown: opened.unknown };
}
