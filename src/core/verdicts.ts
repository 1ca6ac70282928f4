/**
 * A gate verdict as an in-toto Statement v1 (docs/ci.md, docs/decisions.md "Gate verdicts are SLSA
 * verification summaries"): the artifacts it is about as the statement's subjects, and a SLSA
 * Verification Summary (predicate type `https://slsa.dev/verification_summary/v1`) whose
 * `verificationResult` is PASSED exactly when every gate passes (exit code 0), with govctl's own
 * account of the decision in the extension member `govctlVerdict`. Pure: the service signs the
 * statement's bytes (signing/dsse.ts); src/client/verify/verdict.ts reads it back.
 */
import { canonicalize } from './canonical-json.js';
import type { GatePolicy } from './controls/gates.js';
import { sha256Hex } from './hashing.js';
import type { ValidationIssue } from './records/types.js';

export const IN_TOTO_STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
export const VSA_PREDICATE_TYPE = 'https://slsa.dev/verification_summary/v1';
/** The level a passing verdict states (VSA allows custom levels that do not start with `SLSA_`). */
export const GATES_PASSED_LEVEL = 'GOVCTL_GATES_PASSED';
/** Subjects one verdict may name. */
export const MAX_VERDICT_SUBJECTS = 64;

/** An artifact a verdict is about, as an in-toto ResourceDescriptor with a SHA-256 digest. */
export interface VerdictSubject {
  name: string;
  digest: { sha256: string };
}

const SHA256_HEX = /^[0-9a-f]{64}$/;
const MAX_NAME = 1024;

/**
 * Parses `NAME=sha256:HEX` (the `--subject` flag), e.g. `ghcr.io/acme/app=sha256:9f86…`. The name
 * is everything before the last `=`; the digest is 64 hex digits, kept in lower case.
 * @throws Error naming what is wrong
 */
export function parseSubject(text: string): VerdictSubject {
  const at = text.lastIndexOf('=');
  if (at <= 0) throw new Error(`"${text}" is not NAME=sha256:HEX`);
  const name = text.slice(0, at);
  const digest = text.slice(at + 1);
  if (!digest.startsWith('sha256:')) throw new Error(`the digest of ${name} is not sha256:HEX`);
  const hex = digest.slice('sha256:'.length).toLowerCase();
  if (!SHA256_HEX.test(hex)) throw new Error(`the digest of ${name} is not 64 hex digits`);
  return { name, digest: { sha256: hex } };
}

function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 0x20) return true;
  return false;
}

/** Checks a request's `subjects`: 1 to 64 of `{name, digest: {sha256}}`, names unique. */
export function subjectIssues(value: unknown, prefix = 'subjects'): ValidationIssue[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_VERDICT_SUBJECTS) {
    return [{ path: prefix, code: 'type', message: `must be a list of 1 to ${MAX_VERDICT_SUBJECTS} subjects {name, digest: {sha256}}` }];
  }
  const issues: ValidationIssue[] = [];
  const names = new Set<string>();
  value.forEach((subject: unknown, index) => {
    const at = `${prefix}[${index}]`;
    const s = subject as { name?: unknown; digest?: { sha256?: unknown } } | null;
    if (typeof s !== 'object' || s === null || Array.isArray(s)) {
      issues.push({ path: at, code: 'type', message: 'must be an object {name, digest: {sha256}}' });
      return;
    }
    if (typeof s.name !== 'string' || s.name.length === 0 || s.name.length > MAX_NAME || hasControl(s.name)) {
      issues.push({ path: `${at}.name`, code: 'format', message: `must be a name of 1 to ${MAX_NAME} characters without control characters` });
    } else if (names.has(s.name)) issues.push({ path: `${at}.name`, code: 'format', message: 'names the same artifact twice' });
    else names.add(s.name);
    const digest = s.digest;
    if (typeof digest !== 'object' || digest === null || Array.isArray(digest) || Object.keys(digest).join() !== 'sha256') {
      issues.push({ path: `${at}.digest`, code: 'type', message: 'must be {"sha256": "<64 lower-case hex digits>"}' });
    } else if (typeof digest.sha256 !== 'string' || !SHA256_HEX.test(digest.sha256)) {
      issues.push({ path: `${at}.digest.sha256`, code: 'format', message: 'must be 64 lower-case hex digits' });
    }
  });
  return issues;
}

/** One gate as the verdict records it: its policy and its result. */
export interface VerdictGate {
  gate_id: string;
  framework: string;
  name: string;
  mode: string;
  threshold_pct: number;
  current_pct: number;
  passing: boolean;
  blocking: boolean;
  exit_code: 0 | 1 | 2;
  reason?: string;
}

/** The log's signed checkpoint when the verdict was made (before the verdict's own leaf). */
export interface VerdictCheckpoint {
  origin: string;
  tree_size: number;
  /** base64, as in the checkpoint */
  root_hash: string;
  /** the signed note, for a check with the pinned log key */
  note: string;
}

/** Everything a verdict states. */
export interface VerdictFacts {
  verdictId: string;
  workspaceId: string;
  /** the AI system the artifact belongs to, when the caller named one */
  system: string | null;
  /** ISO 8601 */
  time: string;
  subjects: readonly VerdictSubject[];
  gates: readonly VerdictGate[];
  exitCode: 0 | 1 | 2;
  posture: { overall_pct: number; frameworks: readonly { framework: string; score_pct: number; controls_required: number; controls_covered: number }[] };
  policy: GatePolicy;
  checkpoint: VerdictCheckpoint | null;
  /** the verifier's identity: `https://<the workspace log's origin>` */
  verifierId: string;
}

/** The lower-case hex SHA-256 of a gate policy's canonical JSON: what `policy.digest` names. */
export function gatePolicyDigest(policy: GatePolicy): string {
  return sha256Hex(canonicalize(policy));
}

/** The in-toto Statement v1 of a verdict. */
export function verdictStatement(facts: VerdictFacts): Record<string, unknown> {
  const passed = facts.exitCode === 0;
  const first = facts.subjects[0];
  return {
    _type: IN_TOTO_STATEMENT_TYPE,
    subject: facts.subjects.map((subject) => ({ name: subject.name, digest: { sha256: subject.digest.sha256 } })),
    predicateType: VSA_PREDICATE_TYPE,
    predicate: {
      verifier: { id: facts.verifierId },
      timeVerified: facts.time,
      resourceUri: first === undefined ? facts.verifierId : `${first.name}@sha256:${first.digest.sha256}`,
      policy: { uri: `${facts.verifierId}/gate-policy`, digest: { sha256: gatePolicyDigest(facts.policy) } },
      verificationResult: passed ? 'PASSED' : 'FAILED',
      verifiedLevels: passed ? [GATES_PASSED_LEVEL] : ['FAILED'],
      govctlVerdict: {
        verdict_id: facts.verdictId,
        workspace_id: facts.workspaceId,
        system: facts.system,
        exit_code: facts.exitCode,
        gates: facts.gates,
        posture: facts.posture,
        checkpoint: facts.checkpoint,
      },
    },
  };
}
