/**
 * Verification of a signed gate verdict (docs/ci.md "Verifying a verdict"), offline: a DSSE
 * envelope whose payload is an in-toto Statement v1 with a SLSA verification summary made by the
 * service (core/verdicts.ts). Plain named steps, each on the bytes as received, nothing trusted
 * from the envelope but what its signature covers:
 * 1. the envelope is a DSSE envelope (JSON, base64 payload, signatures);
 * 2. a signature verifies with the given key over PAE(payloadType, payload);
 * 3. the payload type is the in-toto one and the payload an in-toto Statement v1 of a verdict;
 * 4. the artifact's digest is one of the statement's subjects;
 * 5. the verdict passes (exit code 0; 1 too when soft failures are allowed).
 * Every failure is a {@link VerdictRejectedError} whose `reason` names the step.
 */
import { dssePae, IN_TOTO_PAYLOAD_TYPE } from '../../core/signing/dsse.js';
import { keyFingerprint, verifyEd25519 } from '../../core/signing/ed25519.js';
import { SPKI_ED25519_PREFIX } from '../../core/signing/keys.js';
import { GATES_PASSED_LEVEL, IN_TOTO_STATEMENT_TYPE, VSA_PREDICATE_TYPE } from '../../core/verdicts.js';

/** Why a verdict was not accepted. */
export type VerdictRejection =
  /** not a DSSE envelope, or the statement inside is not a verdict */
  | 'malformed'
  /** no signature by the given key: signed by another key (its keyid is not the given key's) */
  | 'unknown_key'
  /** a signature claims the given key but does not verify: the payload or the signature was changed */
  | 'altered'
  /** the statement is about other artifacts */
  | 'other_subject'
  /** the gates did not pass */
  | 'failing_verdict';

export class VerdictRejectedError extends Error {
  override readonly name = 'VerdictRejectedError';
  constructor(
    readonly reason: VerdictRejection,
    message: string,
  ) {
    super(message);
  }
}

/** What a verdict that verified states. */
export interface VerifiedVerdict {
  verdictId: string;
  workspaceId: string;
  exitCode: 0 | 1 | 2;
  timeVerified: string;
  /** the subject whose digest matched */
  subject: { name: string; sha256: string };
  /** the fingerprint of the key whose signature verified */
  keyid: string;
  statement: Record<string, unknown>;
}

export interface VerifyVerdictOptions {
  /** the verdict key: 64 hex digits, or a PEM SubjectPublicKeyInfo of an Ed25519 key */
  key: string;
  /** the artifact's SHA-256, hex (a `sha256:` prefix is allowed) */
  subjectSha256: string;
  /** also accept a verdict whose exit code is 1 (only non-blocking gates fail) */
  allowSoftFail?: boolean;
}

const HEX_KEY = /^[0-9a-f]{64}$/;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function malformed(why: string): VerdictRejectedError {
  return new VerdictRejectedError('malformed', why);
}

/**
 * The verdict key as 64 lower-case hex digits, from hex or a PEM `PUBLIC KEY` (Ed25519 only).
 * @throws Error when it is neither
 */
export function publicKeyHex(key: string): string {
  const text = key.trim();
  if (HEX_KEY.test(text.toLowerCase())) return text.toLowerCase();
  const pem = /^-----BEGIN PUBLIC KEY-----\s+([A-Za-z0-9+/=\s]+?)\s*-----END PUBLIC KEY-----$/.exec(text);
  if (pem) {
    const der = Buffer.from(pem[1].replace(/\s+/g, ''), 'base64');
    if (der.length === SPKI_ED25519_PREFIX.length + 32 && der.subarray(0, SPKI_ED25519_PREFIX.length).equals(SPKI_ED25519_PREFIX)) {
      return der.subarray(SPKI_ED25519_PREFIX.length).toString('hex');
    }
    throw new Error('the PEM key is not an Ed25519 public key');
  }
  throw new Error('a verdict key is 64 hex digits or a PEM public key (`govctl gates verdict-key --format pem`)');
}

/** Base64 in either alphabet (DSSE allows both), padding optional. */
function decodeBase64(text: string, what: string): Buffer {
  if (!BASE64.test(text)) throw malformed(`${what} is not base64`);
  return Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

/** Step 1: the envelope's parts, decoded. */
export function parseEnvelope(text: string): { payloadType: string; body: Buffer; signatures: { keyid?: string; sig: Buffer }[] } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw malformed('the file is not JSON: not a DSSE envelope');
  }
  if (!isObject(value)) throw malformed('not a DSSE envelope (a JSON object with payloadType, payload and signatures)');
  const { payloadType, payload, signatures } = value;
  if (typeof payloadType !== 'string') throw malformed('the envelope has no payloadType');
  if (typeof payload !== 'string') throw malformed('the envelope has no payload');
  if (!Array.isArray(signatures) || signatures.length === 0) throw malformed('the envelope has no signatures');
  return {
    payloadType,
    body: decodeBase64(payload, 'the payload'),
    signatures: signatures.map((signature: unknown, i) => {
      if (!isObject(signature) || typeof signature.sig !== 'string') throw malformed(`signatures[${i}] has no sig`);
      if (signature.keyid !== undefined && typeof signature.keyid !== 'string') throw malformed(`signatures[${i}].keyid is not a string`);
      return { ...(signature.keyid !== undefined ? { keyid: signature.keyid } : {}), sig: decodeBase64(signature.sig, `signatures[${i}].sig`) };
    }),
  };
}

/** Step 2: some signature verifies with the key over PAE(payloadType, body). @returns the key's fingerprint */
export function checkSignature(envelope: ReturnType<typeof parseEnvelope>, keyHex: string): string {
  const pae = dssePae(envelope.payloadType, envelope.body);
  const fingerprint = keyFingerprint(keyHex);
  if (envelope.signatures.some(({ sig }) => verifyEd25519(pae, sig.toString('hex'), keyHex))) return fingerprint;
  // The keyid is a hint the signature does not cover: it only names the likelier cause.
  if (envelope.signatures.some(({ keyid }) => keyid === fingerprint)) {
    throw new VerdictRejectedError('altered', 'the signature by the given key does not verify: the payload (or the signature) was altered after signing');
  }
  const ids = envelope.signatures.map(({ keyid }) => keyid ?? '(none)').join(', ');
  throw new VerdictRejectedError('unknown_key', `no signature by the given key (key id ${fingerprint}); the envelope is signed by key id ${ids}`);
}

/** Step 3: the signed payload is an in-toto Statement v1 of a govctl gate verdict. */
export function parseStatement(payloadType: string, body: Buffer): Record<string, unknown> {
  if (payloadType !== IN_TOTO_PAYLOAD_TYPE) throw malformed(`the payload type is ${JSON.stringify(payloadType)}, not ${IN_TOTO_PAYLOAD_TYPE}`);
  let statement: unknown;
  try {
    statement = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    throw malformed('the payload is not UTF-8 JSON');
  }
  if (!isObject(statement) || statement._type !== IN_TOTO_STATEMENT_TYPE)
    throw malformed(`the payload is not an in-toto Statement (${IN_TOTO_STATEMENT_TYPE})`);
  if (!Array.isArray(statement.subject) || statement.subject.length === 0) throw malformed('the statement has no subject');
  if (statement.predicateType !== VSA_PREDICATE_TYPE) throw malformed(`the predicate type is not ${VSA_PREDICATE_TYPE}`);
  const predicate = statement.predicate;
  if (!isObject(predicate) || !isObject(predicate.govctlVerdict)) throw malformed('the predicate is not a govctl gate verdict');
  const verdict = predicate.govctlVerdict;
  if (typeof verdict.verdict_id !== 'string' || typeof verdict.workspace_id !== 'string') throw malformed('the verdict has no verdict_id or workspace_id');
  if (verdict.exit_code !== 0 && verdict.exit_code !== 1 && verdict.exit_code !== 2) throw malformed('the verdict exit_code is not 0, 1 or 2');
  const passed = verdict.exit_code === 0;
  const levels = predicate.verifiedLevels;
  if (
    predicate.verificationResult !== (passed ? 'PASSED' : 'FAILED') ||
    !Array.isArray(levels) ||
    levels.length !== 1 ||
    levels[0] !== (passed ? GATES_PASSED_LEVEL : 'FAILED')
  ) {
    throw malformed('the verificationResult and verifiedLevels do not agree with the exit code');
  }
  if (typeof predicate.timeVerified !== 'string') throw malformed('the predicate has no timeVerified');
  return statement;
}

/** Step 4: the subject whose sha256 is the artifact's. */
export function matchSubject(statement: Record<string, unknown>, sha256: string): { name: string; sha256: string } {
  const wanted = sha256.toLowerCase().replace(/^sha256:/, '');
  for (const subject of statement.subject as unknown[]) {
    if (!isObject(subject) || !isObject(subject.digest)) continue;
    if (typeof subject.digest.sha256 === 'string' && subject.digest.sha256.toLowerCase() === wanted) {
      return { name: typeof subject.name === 'string' ? subject.name : '', sha256: wanted };
    }
  }
  const names = (statement.subject as unknown[]).map((s) => (isObject(s) && typeof s.name === 'string' ? s.name : '?')).join(', ');
  throw new VerdictRejectedError('other_subject', `the verdict is about another artifact (${names}), not sha256:${wanted}`);
}

/** Step 5: the gates passed (exit 0, or 1 when soft failures are allowed). */
export function checkPasses(exitCode: 0 | 1 | 2, allowSoftFail: boolean): void {
  if (exitCode === 0 || (exitCode === 1 && allowSoftFail)) return;
  throw new VerdictRejectedError(
    'failing_verdict',
    exitCode === 2
      ? 'the verdict is a failure: a blocking gate failed (exit code 2)'
      : 'the verdict is a soft failure: a non-blocking gate failed (exit code 1)',
  );
}

/**
 * Verifies a verdict envelope for one artifact with a pinned key, offline.
 * @throws VerdictRejectedError naming the reason; Error for a key that is not a verdict key
 *
 * @example
 * const verdict = verifyVerdict(readFileSync('verdict.json', 'utf8'), { key: pem, subjectSha256: digest });
 */
export function verifyVerdict(envelopeText: string, options: VerifyVerdictOptions): VerifiedVerdict {
  const keyHex = publicKeyHex(options.key);
  const envelope = parseEnvelope(envelopeText);
  const keyid = checkSignature(envelope, keyHex);
  const statement = parseStatement(envelope.payloadType, envelope.body);
  const subject = matchSubject(statement, options.subjectSha256);
  const predicate = statement.predicate as Record<string, unknown>;
  const verdict = predicate.govctlVerdict as { verdict_id: string; workspace_id: string; exit_code: 0 | 1 | 2 };
  checkPasses(verdict.exit_code, options.allowSoftFail === true);
  return {
    verdictId: verdict.verdict_id,
    workspaceId: verdict.workspace_id,
    exitCode: verdict.exit_code,
    timeVerified: predicate.timeVerified as string,
    subject,
    keyid,
    statement,
  };
}
