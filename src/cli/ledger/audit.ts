/**
 * `govctl ledger audit`: the whole log, checked from the outside. Downloads every entry bundle of
 * the verified checkpoint's tree, recomputes the root with a {@link CompactTree} (constant
 * memory), fetches every record by id and checks it against its entry's sha256, then recomputes
 * posture and gates from the verified evidence and compares them with what the service states.
 * Every discrepancy is named; any exits 2. A forged coverage table, which no proof of a single
 * record can see, shows up here as a score the records do not support.
 */
import { terminalText } from '../terminal-text.js';
import {
  canonicalize,
  CompactTree,
  coverageByFramework,
  decodeEntryBundle,
  entryBundlesForSize,
  isPlainObject,
  verifyClientSig,
  verifyWitness,
  type SigningKey,
  leafHash,
  parseJsonLossless,
  parseLedgerEntry,
  scoresFrom,
  tilePath,
  type JsonValue,
} from '../../core/index.js';
import { sha256Hex } from '../../core/hashing.js';
import { NotFoundError } from '../../client/errors.js';
import type { ServiceApi } from '../../client/api.js';
import { fetchCheckpoint, LedgerCheckError } from './checks.js';
import type { Ed25519NoteVerifier } from '../../core/index.js';

/** What an audit found. */
export interface AuditReport {
  origin: string;
  tree_size: number;
  root_hash: string;
  records: number;
  evidence: number;
  attestations: number;
  /** signed evidence records whose client_sig could not be checked (no signing key configured) */
  client_sig_unchecked: number;
  problems: string[];
}

/** Most problems listed one by one; the rest are counted. */
const MAX_LISTED = 200;

export async function auditLog(
  api: ServiceApi,
  log: Ed25519NoteVerifier,
  workspaceId: string,
  nowMs: () => number,
  signingKey: SigningKey | undefined,
  onProgress: (done: number, total: number) => void = () => {},
): Promise<AuditReport> {
  const { opened } = await fetchCheckpoint(api, log);
  const { size, rootHash, origin } = opened.checkpoint;
  const problems: string[] = [];
  let unlisted = 0;
  const problem = (text: string) => {
    if (problems.length < MAX_LISTED) problems.push(text);
    else unlisted += 1;
  };
  const tree = CompactTree.empty();
  // control id → latest ms a verified record earned it (the same rule as the service: the earlier
  // of occurred_at and received_at, so future-dating cannot inflate freshness)
  const coverage = new Map<string, number>();
  let evidence = 0;
  let attestations = 0;
  let unchecked = 0;

  for (const bundle of entryBundlesForSize(size)) {
    const path = tilePath(bundle);
    let entries: Buffer[];
    try {
      entries = decodeEntryBundle(await api.workspaceBytes(`ledger/${path}`), bundle.width);
    } catch (error) {
      if (error instanceof NotFoundError) throw new LedgerCheckError(`the service does not serve ${path}, which its signed checkpoint at size ${size} implies`);
      throw new LedgerCheckError(`${path} is malformed: ${terminalText((error as Error).message)}`);
    }
    for (const [i, bytes] of entries.entries()) {
      const index = bundle.index * 256 + i;
      tree.append(leafHash(bytes));
      let entry;
      try {
        entry = parseLedgerEntry(bytes);
      } catch (error) {
        problem(`leaf ${index}: the entry is malformed (${terminalText((error as Error).message)})`);
        continue;
      }
      if (entry.workspace_id !== workspaceId) problem(`leaf ${index}: the entry is for workspace ${terminalText(entry.workspace_id)}`);
      const kind = entry.kind;
      const recordPath = kind === 'attestation' ? `attestations/${encodeURIComponent(entry.id)}` : `grc/evidence/${encodeURIComponent(entry.id)}`;
      let text: string;
      try {
        text = (await api.workspaceText('GET', recordPath)).body;
      } catch (error) {
        if (error instanceof NotFoundError) {
          problem(`leaf ${index}: ${kind} ${terminalText(entry.id)} is logged but the service no longer returns it (deleted)`);
          continue;
        }
        throw error;
      }
      const record = parseJsonLossless(text) as Record<string, JsonValue>;
      if (sha256Hex(canonicalize(record)) !== entry.sha256) {
        problem(`leaf ${index}: ${kind} ${terminalText(entry.id)} as returned is not what the log committed to (changed in storage)`);
        continue;
      }
      if (kind === 'attestation') {
        attestations += 1;
        // The trust tier must be what the witness signature supports, checked here again.
        // `record` is the attestation as sent (and signed); `detail` says why a verified signature
        // earned only `declared` (the workspace's key policy).
        const attestation = record.record;
        if (isPlainObject(attestation)) {
          const signed = attestation.witness_sig !== undefined && attestation.witness_sig !== null;
          const form = signed ? verifyWitness(attestation, workspaceId) : null;
          if (signed && form === null) problem(`leaf ${index}: attestation ${terminalText(entry.id)}: witness_sig does not verify with its verifying_key_hex`);
          const unsupported = record.trust_tier === 'witnessed' ? form === null : form !== null && record.detail === 'ok';
          if (unsupported) problem(`leaf ${index}: attestation ${terminalText(entry.id)} is ${terminalText(String(record.trust_tier))}, which its signature does not support`);
        } else problem(`leaf ${index}: attestation ${terminalText(entry.id)} carries no attestation record`);
      } else {
        evidence += 1;
        if (record.client_sig !== undefined && record.client_sig !== null) {
          if (signingKey === undefined) unchecked += 1;
          else if (!verifyClientSig(record, workspaceId, signingKey)) problem(`leaf ${index}: evidence ${terminalText(entry.id)}: client_sig does not verify with the configured signing key`);
        }
        const earned = Math.min(Date.parse(String(record.occurred_at)), Date.parse(String(record.received_at)));
        const controls = Array.isArray(record.mapped_controls) ? record.mapped_controls : [];
        for (const control of controls) {
          if (typeof control !== 'string') continue;
          const previous = coverage.get(control);
          if (previous === undefined || earned > previous) coverage.set(control, earned);
        }
      }
      onProgress(index + 1, size);
    }
  }
  if (!tree.root().equals(rootHash)) {
    problem(`the entries served for leaves 0..${size - 1} do not hash to the signed root: the stored log was altered (entries changed, removed or reordered)`);
  }

  // Posture and gates from the verified records, at the instant of the comparison.
  const brief = parseJsonLossless((await api.workspaceText('GET', 'grc/posture-brief')).body) as { overall_pct?: unknown; frameworks?: { framework: string; score_pct: unknown }[] };
  const byFramework = coverageByFramework(coverage, nowMs());
  const scores = scoresFrom(byFramework);
  if (Number(brief.overall_pct) !== scores.overall_pct) {
    problem(`posture: the service states overall ${String(brief.overall_pct)} %, the verified records support ${scores.overall_pct} % (a forged coverage table?)`);
  }
  for (const own of scores.frameworks) {
    const stated = brief.frameworks?.find((f) => f.framework === own.framework);
    if (!stated || Number(stated.score_pct) !== own.score_pct) {
      problem(`posture: ${own.framework} is ${stated ? String(stated.score_pct) : 'missing'} % at the service, ${own.score_pct} % from the verified records`);
    }
  }
  const gates = parseJsonLossless((await api.workspaceText('GET', 'grc/gates/check')).body) as { results?: { framework: string; threshold_pct: unknown; status: string }[] };
  for (const result of gates.results ?? []) {
    const own = byFramework.find((f) => f.framework === result.framework);
    if (!own) continue;
    const passing = own.score_pct >= Number(result.threshold_pct);
    if ((result.status === 'passing') !== passing) {
      problem(`gates: ${result.framework} is ${result.status} at the service, ${passing ? 'passing' : 'failing'} from the verified records (${own.score_pct} % vs ${String(result.threshold_pct)} %)`);
    }
  }
  if (unlisted > 0) problems.push(`… and ${unlisted} more`);
  return { origin, tree_size: size, root_hash: rootHash.toString('base64'), records: evidence + attestations, evidence, attestations, client_sig_unchecked: unchecked, problems };
}
