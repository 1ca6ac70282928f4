/**
 * The service's verdict key (docs/ci.md): the Ed25519 key that signs gate verdicts, one key per
 * protocol, so never the log's checkpoint key. It is kept as the log key is (admin.ts): a file of
 * its own, mode 0600, never overwritten, in the signed-note signer key spelling, by default beside
 * the database (`<db>.verdict-key`). The private key never touches the database.
 */
import { createPublicKey } from 'node:crypto';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { generateSignerKey, keyFingerprint, parseSignerKey, SPKI_ED25519_PREFIX } from '../core/index.js';
import type { SigningKey } from '../core/signing/keys.js';

/** The key name written in a verdict key file. */
export const VERDICT_KEY_NAME = 'govctl-verdict';

/** Where `govctl serve` and the embedded store keep the verdict key of a database file. */
export function verdictKeyPath(dbPath: string): string {
  return `${dbPath}.verdict-key`;
}

/** The verdict key file is missing, unreadable, readable by others or not a signer key. */
export class VerdictKeyError extends Error {
  override readonly name = 'VerdictKeyError';
}

/**
 * Creates a verdict key file (mode 0600); an existing file is never overwritten.
 * @throws VerdictKeyError when the file exists
 */
export function createVerdictKey(file: string): { file: string } {
  const { signerKey } = generateSignerKey(VERDICT_KEY_NAME);
  try {
    writeFileSync(file, `${signerKey}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new VerdictKeyError(`the verdict key file ${file} exists already; it is never overwritten`);
    throw error;
  }
  chmodSync(file, 0o600);
  return { file };
}

/**
 * Reads a verdict key file: it must exist, be readable by its owner only, and hold one signer
 * key. The error never quotes the file's content.
 * @throws VerdictKeyError
 */
export function readVerdictKey(file: string): SigningKey {
  let text: string;
  try {
    if ((statSync(file).mode & 0o077) !== 0) throw new VerdictKeyError(`the verdict key file ${file} is readable by others: chmod 600 it`);
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof VerdictKeyError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new VerdictKeyError(code === 'ENOENT' ? `no verdict key file ${file}` : `cannot read the verdict key file ${file} (${code ?? 'error'})`);
  }
  try {
    return parseSignerKey(text).key;
  } catch (error) {
    throw new VerdictKeyError(`${file} is not a verdict key file (${(error as Error).message})`);
  }
}

/**
 * The public half of a verdict key as GET gates/verdict-key and `govctl admin verdict-key create`
 * show it: hex, the DSSE key id (its fingerprint), and PEM (SubjectPublicKeyInfo, what cosign and
 * Kyverno take).
 */
export function verdictPublicKey(key: SigningKey): { algorithm: 'ed25519'; public_key: string; keyid: string; pem: string } {
  const hex = key.publicKeyHex;
  const der = Buffer.concat([SPKI_ED25519_PREFIX, Buffer.from(hex, 'hex')]);
  const pem = createPublicKey({ key: der, format: 'der', type: 'spki' }).export({ format: 'pem', type: 'spki' }).toString();
  return { algorithm: 'ed25519', public_key: hex, keyid: keyFingerprint(hex), pem };
}
