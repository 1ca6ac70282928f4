/**
 * `ledger audit`: the whole log and everything the service states about it, checked from the
 * outside. One function per step, each over what the service answers (untrusted, read strictly):
 *
 * 1. {@link readLog}: every entry bundle of the verified checkpoint's tree, the root recomputed;
 *    of each leaf only its id, kind and digest are kept.
 * 2. {@link checkRecords}: every stored record (evidence from the export, attestations and gate
 *    verdicts from their lists, a page at a time), each against its leaf: the digest of its
 *    canonical JSON, its signatures; every record returned once.
 * 3. {@link readPolicyLog}: every gate policy change, against its `gate_policy` leaf the same way;
 *    then {@link checkEveryLeafReturned}.
 * 4. {@link checkLaterRecords}: a record (or change) with no leaf in the audited tree counts only
 *    with an inclusion proof that verifies against a later checkpoint proven consistent with it.
 * 5. {@link checkPolicy}: the policy the gates are judged under, the latest logged one, which must
 *    be the one the service says is in force.
 * 6. {@link checkPosture} and {@link checkGates}: posture and gates recomputed from the verified
 *    records under that policy, compared with every member of the service's answers.
 *
 * Every discrepancy is named in `problems`; a step that cannot go on throws a LedgerCheckError.
 */
import { canonicalize, isPlainObject, type JsonValue } from '../../core/canonical-json.js';
import {
  coverageByFramework,
  DEFAULT_GATE_POLICY,
  failingGateFrameworks,
  gatesFrom,
  scoresFrom,
  validateGatePolicy,
  type FrameworkCoverage,
  type Gate,
  type GatePolicy,
  type GateRule,
} from '../../core/controls/index.js';
import {
  CompactTree,
  decodeEntryBundle,
  entryBundlesForSize,
  leafHash,
  parseLedgerEntry,
  tilePath,
  type Ed25519NoteVerifier,
  type LedgerEntryKind,
  type OpenedCheckpoint,
} from '../../core/ledger/index.js';
import { FRAMEWORKS, type Framework } from '../../core/records/types.js';
import type { SigningKey } from '../../core/signing/index.js';
import type { ServiceApi } from '../api.js';
import { LedgerCheckError, NotFoundError } from '../errors.js';
import type { StoredAttestation } from '../wire-types.js';
import { askInclusion, checkConsistency, fetchCheckpoint, verifyInclusionProof } from './log.js';
import { readStoredRecord, recordDigest, storedRecord, verifyEvidenceSignature, verifyStoredAttestation, type RecordKind } from './records.js';
import { readReply, shapeProblem, shown, wholeNumber } from './untrusted.js';

/** Evidence records per export request (the pages are parsed whole; smaller pages keep memory down). */
const EVIDENCE_PAGE = 250;

/** Attestations per list request: the list's maximum page. */
const ATTESTATION_PAGE = 200;

/** Gate verdicts read per request of GET gates/verdicts (the most the service answers). */
const VERDICT_PAGE = 500;

/**
 * `since` of the attestation list that covers all time: the earliest instant an ISO 8601 date-time
 * with a zone can name (year 0000 at +23:59), so no stored attestation falls before it.
 */
const ALL_TIME = '0000-01-01T00:00:00+23:59';

/** Most problems listed one by one; the rest are counted. */
const MAX_LISTED = 200;

/** Entry bundles requested ahead of the one being read (order kept; memory stays a few bundles). */
const BUNDLES_AHEAD = 4;

/**
 * Records returned without a leaf in the audited tree that are proven one by one against a later
 * checkpoint. Past this many, the rest are named unproven: more written while the audit ran is unusual.
 */
const MAX_LOOKUPS = 1000;

/**
 * Records the service may return beyond the audited tree's size (those written while the audit
 * runs) before the audit stops reading: one that pages on past this is looping or making records up.
 */
const MAX_EXTRA_RECORDS = 100_000;

/** A figure as the service states it beside the one recomputed from the verified records. */
export interface Compared<T> {
  service: T | null;
  verified: T;
}

/** What an audit found. */
export interface AuditReport {
  origin: string;
  tree_size: number;
  root_hash: string;
  records: number;
  evidence: number;
  attestations: number;
  /** gate verdicts whose leaves verified */
  verdicts: number;
  /** gate policy changes whose leaves verified */
  gate_policy_changes: number;
  /** signed evidence records whose client_sig could not be checked (no signing key configured) */
  client_sig_unchecked: number;
  /** records returned with no leaf in the audited tree, proven included in a later checkpoint consistent with it */
  logged_after_checkpoint: number;
  /** where the gate policy the gates were recomputed under comes from */
  policy: string;
  posture: { overall_pct: Compared<number>; frameworks: ({ framework: Framework } & Compared<number>)[] };
  gates: ({ framework: Framework; mode: string; threshold_pct: number } & Compared<'passing' | 'failing'>)[];
  passed: Compared<boolean>;
  problems: string[];
}

/** Where an audit stands, for a progress display. */
export interface AuditProgress {
  phase: 'log' | 'records';
  /** leaves read (log) or records checked (records) */
  done: number;
  /** the tree size */
  total: number;
}

export interface AuditOptions {
  api: ServiceApi;
  /** the pinned log key */
  log: Ed25519NoteVerifier;
  workspaceId: string;
  /** the instant posture and gates are recomputed at */
  nowMs: () => number;
  /** the workspace's signing key, to check client_sig (HMAC); none: those are counted unchecked */
  signingKey?: SigningKey;
  onProgress?: (progress: AuditProgress) => void;
}

/** The problems found so far: the first {@link MAX_LISTED} named, the rest counted. */
export class Problems {
  readonly listed: string[] = [];
  unlisted = 0;

  add(text: string): void {
    if (this.listed.length < MAX_LISTED) this.listed.push(text);
    else this.unlisted += 1;
  }

  /** A problem that ends a step: named even past the cap (at most a few). */
  addAlways(text: string): void {
    this.listed.push(text);
  }

  all(): string[] {
    return this.unlisted > 0 ? [...this.listed, `… and ${this.unlisted} more`] : this.listed;
  }
}

type LeafKind = LedgerEntryKind;

/** What the audit keeps of each leaf: its id (a Map to its index), its kind, the digest its entry commits to, whether its record was returned. */
export class Leaves {
  readonly index = new Map<string, number>();
  readonly kinds: (LeafKind | undefined)[];
  readonly digests: Buffer;
  readonly seen: Uint8Array;

  constructor(readonly size: number) {
    this.kinds = new Array<LeafKind | undefined>(size);
    this.digests = Buffer.alloc(size * 32);
    this.seen = new Uint8Array(size);
  }

  digest(index: number): string {
    return this.digests.toString('hex', index * 32, index * 32 + 32);
  }
}

/**
 * Step 1: every entry of the audited tree, hashed into the root, each parsed (core's
 * parseLedgerEntry: the one canonical spelling) and kept as id → kind and digest.
 */
export async function readLog(
  api: ServiceApi,
  opened: OpenedCheckpoint,
  workspaceId: string,
  problems: Problems,
  onProgress: (progress: AuditProgress) => void,
): Promise<Leaves> {
  const { size, rootHash } = opened.checkpoint;
  const leaves = new Leaves(size);
  const tree = CompactTree.empty();
  const bundles = [...entryBundlesForSize(size)];
  const fetchBundle = (at: number) => {
    const reply = api.workspaceBytes(`ledger/${tilePath(bundles[at])}`);
    reply.catch(() => {}); // awaited in order below; a rejection ahead of its turn is not unhandled
    return reply;
  };
  const ahead: Promise<Buffer>[] = [];
  for (let at = 0; at < Math.min(BUNDLES_AHEAD, bundles.length); at++) ahead.push(fetchBundle(at));
  for (let at = 0; at < bundles.length; at++) {
    const bundle = bundles[at];
    const path = tilePath(bundle);
    let bytes: Buffer;
    try {
      bytes = await ahead.shift()!;
    } catch (error) {
      if (error instanceof NotFoundError) throw new LedgerCheckError(`the service does not serve ${path}, which its signed checkpoint at size ${size} implies`);
      throw error;
    }
    if (at + BUNDLES_AHEAD < bundles.length) ahead.push(fetchBundle(at + BUNDLES_AHEAD));
    let entries: Buffer[];
    try {
      entries = decodeEntryBundle(bytes, bundle.width);
    } catch (error) {
      throw new LedgerCheckError(`${path} is malformed: ${(error as Error).message}`);
    }
    for (const [offset, entryBytes] of entries.entries()) {
      const index = bundle.index * 256 + offset;
      tree.append(leafHash(entryBytes));
      let entry;
      try {
        entry = parseLedgerEntry(entryBytes);
      } catch (error) {
        problems.add(`leaf ${index}: the entry is malformed (${(error as Error).message})`);
        continue;
      }
      if (entry.workspace_id !== workspaceId) problems.add(`leaf ${index}: the entry is for workspace ${shown(entry.workspace_id)}`);
      const earlier = leaves.index.get(entry.id);
      if (earlier !== undefined) {
        problems.add(`leaf ${index}: ${entry.kind} ${shown(entry.id)} is logged again (first at leaf ${earlier})`);
        continue;
      }
      leaves.index.set(entry.id, index);
      leaves.kinds[index] = entry.kind;
      leaves.digests.write(entry.sha256, index * 32, 32, 'hex');
    }
    onProgress({ phase: 'log', done: Math.min((at + 1) * 256, size), total: size });
  }
  if (!tree.root().equals(rootHash)) {
    problems.add(
      `the entries served for leaves 0..${size - 1} do not hash to the signed root: the stored log was altered (entries changed, removed or reordered)`,
    );
  }
  return leaves;
}

/** A record returned with no leaf in the audited tree, kept to be proven against a later checkpoint. */
interface LaterRecord {
  kind: LeafKind;
  id: string;
  digest: string;
  /** what it earns, counted once its leaf is proven */
  controls: string[];
  earnedMs: number;
  /** a gate policy change: the policy it logs */
  policy?: GatePolicy;
}

/** A gate policy change whose leaf verified: the policy in force from that leaf on. */
interface LoggedPolicy {
  leafIndex: number;
  changeId: string;
  policy: GatePolicy;
}

/** What step 2 found. */
export interface RecordsRead {
  evidence: number;
  attestations: number;
  verdicts: number;
  clientSigUnchecked: number;
  /** control id → latest ms a verified record earned it */
  coverage: Map<string, number>;
  later: LaterRecord[];
  /** records with no leaf past {@link MAX_LOOKUPS}, not proven one by one */
  laterUnproven: number;
  /** records returned so far (every item, malformed ones included) */
  returned: number;
  /** the gate policy changes whose leaves verified */
  policies: LoggedPolicy[];
}

/**
 * The leaf a returned record stands for, once its id, kind and digest match it; undefined when
 * they do not (named) or it has no leaf in the audited tree (kept for {@link checkLaterRecords}).
 */
function matchLeaf(
  leaves: Leaves,
  read: RecordsRead,
  problems: Problems,
  kind: LeafKind,
  id: string,
  record: Record<string, JsonValue>,
  policy?: GatePolicy,
): number | undefined {
  read.returned += 1;
  const digest = recordDigest(record);
  const index = leaves.index.get(id);
  if (index === undefined) {
    const later: LaterRecord = { kind, id, digest, controls: kind === 'evidence' ? controlsOf(record) : [], earnedMs: earnedMsOf(record) };
    if (policy !== undefined) later.policy = policy;
    if (read.later.length < MAX_LOOKUPS) read.later.push(later);
    else read.laterUnproven += 1;
    return undefined;
  }
  if (leaves.seen[index] !== 0) {
    problems.add(`leaf ${index}: ${kind} ${shown(id)} is returned more than once`);
    return undefined;
  }
  leaves.seen[index] = 1;
  if (leaves.kinds[index] !== kind) {
    problems.add(`leaf ${index}: ${shown(id)} is logged as ${String(leaves.kinds[index])} but returned as ${kind}`);
    return undefined;
  }
  if (digest !== leaves.digest(index)) {
    problems.add(`leaf ${index}: ${kind} ${shown(id)} as returned is not what the log committed to (changed in storage)`);
    return undefined;
  }
  return index;
}

/** Where a kind of record is read from, to name an item that is not one. */
const SOURCES: Record<RecordKind, string> = {
  evidence: 'evidence export',
  attestation: 'attestation list',
  gate_policy: 'gate policy log',
  verdict: 'verdict list',
};

/** A returned item that is not a record the service writes: named, by its leaf when its id has one (which then counts as returned). */
function malformedRecord(leaves: Leaves, read: RecordsRead, problems: Problems, kind: RecordKind, id: string | undefined, problem: string): void {
  read.returned += 1;
  const index = id === undefined ? undefined : leaves.index.get(id);
  if (index !== undefined && leaves.seen[index] === 0) leaves.seen[index] = 1;
  const where =
    id === undefined ? `the ${SOURCES[kind]} returned an item that` : `${index !== undefined ? `leaf ${index}: ` : ''}${kind} ${shown(id)} as returned`;
  problems.add(`${where} is not a record the service writes: ${problem}`);
}

/** When a record earned its controls: the earlier of occurred_at and received_at (as the service counts it, so future-dating earns nothing). */
function earnedMsOf(record: Record<string, JsonValue>): number {
  const at = (value: JsonValue) => (typeof value === 'string' ? Date.parse(value) : NaN);
  return Math.min(at(record.occurred_at), at(record.received_at));
}

/** The controls a record earned, as committed in it (a list of control ids). */
function controlsOf(record: Record<string, JsonValue>): string[] {
  return Array.isArray(record.mapped_controls) ? record.mapped_controls.filter((c): c is string => typeof c === 'string') : [];
}

function earn(coverage: Map<string, number>, controls: readonly string[], earnedMs: number): void {
  for (const control of controls) {
    const previous = coverage.get(control);
    if (previous === undefined || earnedMs > previous) coverage.set(control, earnedMs);
  }
}

/**
 * Step 2: every stored record, a page at a time, each read strictly and checked against its leaf.
 */
export async function checkRecords(
  api: ServiceApi,
  leaves: Leaves,
  options: Pick<AuditOptions, 'workspaceId' | 'signingKey'>,
  problems: Problems,
  onProgress: (progress: AuditProgress) => void,
): Promise<RecordsRead> {
  const { workspaceId, signingKey } = options;
  const read: RecordsRead = {
    evidence: 0,
    attestations: 0,
    verdicts: 0,
    clientSigUnchecked: 0,
    coverage: new Map(),
    later: [],
    laterUnproven: 0,
    returned: 0,
    policies: [],
  };
  const leafOf = (kind: LeafKind, id: string, record: Record<string, JsonValue>) => matchLeaf(leaves, read, problems, kind, id, record);
  const malformed = (kind: RecordKind, id: string | undefined, problem: string) => malformedRecord(leaves, read, problems, kind, id, problem);

  /**
   * Whether to read on after `position` (the export's last record id, the list's cursor): not
   * when the service answers a position it answered before (it would loop for ever) or has
   * returned far more records than the tree holds.
   */
  const positions = new Set<string>();
  const readOn = (source: string, position: string): boolean => {
    if (positions.has(`${source}\u0000${position}`)) {
      problems.addAlways(`the ${source} came back to a page it had returned (after ${shown(position)}): stopped reading it`);
      return false;
    }
    if (read.returned > leaves.size + MAX_EXTRA_RECORDS) {
      problems.addAlways(`the service returned ${read.returned} records for a log of size ${leaves.size}: stopped reading (each record is returned once)`);
      return false;
    }
    positions.add(`${source}\u0000${position}`);
    return true;
  };

  // Evidence: the export, all time, the next page asked for while this one is checked.
  const exportPage = (after?: string): Promise<{ body: string }> => {
    const reply = api.workspaceText('GET', `grc/evidence/export?limit=${EVIDENCE_PAGE}${after !== undefined ? `&after=${encodeURIComponent(after)}` : ''}`);
    reply.catch(() => {}); // awaited on the next turn
    return reply;
  };
  for (let page: Promise<{ body: string }> | undefined = exportPage(); page !== undefined;) {
    const lines: string[] = (await page).body.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    // the last line's id is where the next page starts: asked for before this page is checked
    const lastId = lines.length > 0 ? readStoredRecord(lines[lines.length - 1], 'evidence').id : undefined;
    page = lines.length >= EVIDENCE_PAGE && lastId !== undefined && readOn('evidence export', lastId) ? exportPage(lastId) : undefined;
    if (lines.length >= EVIDENCE_PAGE && lastId === undefined)
      problems.addAlways('the evidence export returned a page whose last line has no record_id: stopped reading it');
    // one record at a time: only the page's text and the record being checked are held
    for (const line of lines) {
      const item = readStoredRecord(line, 'evidence');
      if ('problem' in item) {
        malformed('evidence', item.id, item.problem);
        continue;
      }
      const { id, record } = item;
      const index = leafOf('evidence', id, record);
      if (index === undefined) continue;
      read.evidence += 1;
      if (record.client_sig !== undefined && record.client_sig !== null) {
        if (signingKey === undefined) read.clientSigUnchecked += 1;
        else if (verifyEvidenceSignature(record, 0, workspaceId, signingKey).status !== 'valid')
          problems.add(`leaf ${index}: evidence ${shown(id)}: client_sig does not verify with the configured signing key`);
      }
      earn(read.coverage, controlsOf(record), earnedMsOf(record));
    }
    onProgress({ phase: 'records', done: read.returned, total: leaves.size });
  }

  // Attestations: the list, all time, a page at a time (each item the body GET by id returns).
  for (let cursor: string | undefined, first = true; first || cursor !== undefined; first = false) {
    const { body } = await api.workspaceText(
      'GET',
      `attestations?since=${encodeURIComponent(ALL_TIME)}&limit=${ATTESTATION_PAGE}${cursor !== undefined ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    const list = readReply(body, 'the attestation list', { required: ['attestations'], optional: ['next_cursor'] });
    if (!Array.isArray(list.attestations)) throw new LedgerCheckError('the attestation list holds no list of attestations');
    cursor = typeof list.next_cursor === 'string' ? list.next_cursor : undefined;
    for (const value of list.attestations) {
      const item = storedRecord(value, 'attestation');
      if ('problem' in item) {
        malformed('attestation', item.id, item.problem);
        continue;
      }
      const { id, record } = item;
      const index = leafOf('attestation', id, record);
      if (index === undefined) continue;
      read.attestations += 1;
      const checked = verifyStoredAttestation(record as unknown as StoredAttestation, 0, workspaceId);
      if (checked.status === 'invalid')
        problems.add(`leaf ${index}: attestation ${shown(id)}: ${checked.reason ?? 'witness_sig does not verify with its verifying_key_hex'}`);
    }
    onProgress({ phase: 'records', done: read.returned, total: leaves.size });
    if (cursor !== undefined && !readOn('attestation list', cursor)) cursor = undefined;
  }

  // Gate verdicts: the list, newest first, a page at a time (each item the body GET by id returns).
  for (let before: string | undefined, first = true; first || before !== undefined; first = false) {
    const { body } = await api.workspaceText(
      'GET',
      `gates/verdicts?limit=${VERDICT_PAGE}${before !== undefined ? `&before=${encodeURIComponent(before)}` : ''}`,
    );
    const list = readReply(body, 'the verdict list', { required: ['verdicts', 'next_before'] });
    if (!Array.isArray(list.verdicts)) throw new LedgerCheckError('the verdict list holds no list of verdicts');
    before = typeof list.next_before === 'string' ? list.next_before : undefined;
    for (const value of list.verdicts) {
      const item = storedRecord(value, 'verdict');
      if ('problem' in item) {
        malformed('verdict', item.id, item.problem);
        continue;
      }
      const { id, record } = item;
      if (record.workspace_id !== workspaceId) problems.add(`verdict ${shown(id)} is for workspace ${canonicalize(record.workspace_id)}`);
      if (leafOf('verdict', id, record) !== undefined) read.verdicts += 1;
    }
    onProgress({ phase: 'records', done: read.returned, total: leaves.size });
    if (before !== undefined && !readOn('verdict list', before)) before = undefined;
  }

  return read;
}

/** Every leaf's record returned? (After the records and the gate policy changes are read.) */
export function checkEveryLeafReturned(leaves: Leaves, problems: Problems): void {
  for (const [id, index] of leaves.index) {
    if (leaves.seen[index] === 0)
      problems.add(`leaf ${index}: ${String(leaves.kinds[index])} ${shown(id)} is logged but the service no longer returns it (deleted)`);
  }
}

/**
 * Step 4: each record returned with no leaf in the audited tree counts only when the log holds it
 * in a later checkpoint, proven consistent with the audited one, by an inclusion proof that
 * verifies against that checkpoint's root and an entry that commits to the record as returned.
 * Returns how many were proven (their controls then count).
 */
export async function checkLaterRecords(
  api: ServiceApi,
  log: Ed25519NoteVerifier,
  audited: OpenedCheckpoint,
  read: RecordsRead,
  workspaceId: string,
  problems: Problems,
): Promise<number> {
  if (read.later.length === 0 && read.laterUnproven === 0) return 0;
  const auditedSize = audited.checkpoint.size;
  let later: OpenedCheckpoint;
  try {
    later = (await fetchCheckpoint(api, log)).opened;
    await checkConsistency(api, audited, later);
  } catch (error) {
    if (!(error instanceof LedgerCheckError)) throw error;
    problems.addAlways(
      `${read.later.length + read.laterUnproven} records have no leaf in the audited tree, and the later checkpoint does not hold: ${error.message}`,
    );
    return 0;
  }
  const size = later.checkpoint.size;
  let proven = 0;
  for (const record of read.later) {
    const what = `${record.kind} ${shown(record.id)}`;
    const answer = await askInclusion(api, record.id, size);
    if (answer.status === 'absent') {
      problems.add(`${what} is stored but the log holds no entry for it (stored without being logged)`);
      continue;
    }
    if (answer.status === 'pending') {
      problems.add(`${what} is stored but not in the log at size ${size} (written while the audit ran? audit again)`);
      continue;
    }
    let leaf;
    try {
      leaf = verifyInclusionProof(answer.body, later, record.id, workspaceId);
    } catch (error) {
      if (!(error instanceof LedgerCheckError)) throw error;
      problems.add(`${what} has no leaf in the log at size ${auditedSize}, and ${error.message}`);
      continue;
    }
    if (leaf.leaf_index < auditedSize)
      problems.add(`${what}: the service proves it at leaf ${leaf.leaf_index}, which the audited tree holds for another record`);
    else if (leaf.parsed.kind !== record.kind) problems.add(`${what} is logged at leaf ${leaf.leaf_index} as ${leaf.parsed.kind}`);
    else if (leaf.parsed.sha256 !== record.digest)
      problems.add(`leaf ${leaf.leaf_index}: ${what} as returned is not what the log committed to (changed in storage)`);
    else {
      proven += 1;
      if (record.kind === 'evidence') read.evidence += 1;
      else if (record.kind === 'attestation') read.attestations += 1;
      else if (record.kind === 'verdict') read.verdicts += 1;
      else if (record.policy !== undefined) read.policies.push({ leafIndex: leaf.leaf_index, changeId: record.id, policy: record.policy });
      earn(read.coverage, record.controls, record.earnedMs);
    }
  }
  if (read.laterUnproven > 0) {
    problems.add(
      `${read.laterUnproven} more records are stored with no leaf in the log at size ${auditedSize} (not proven one by one: stored without being logged, or written while the audit ran)`,
    );
  }
  return proven;
}

/** The gate policy the gates are judged under, and where it comes from. */
export interface PolicyInForce {
  policy: GatePolicy;
  source: string;
}

/** The members of one result of gates/check. */
const RESULT_SHAPE = { required: ['framework', 'mode', 'threshold_pct', 'current_pct', 'status'] };
/** The members of one gate of gates/check. */
const GATE_SHAPE = { required: ['gate_id', 'name', 'passing', 'blocking', 'exit_code'], optional: ['reason'] };

/** gates/check as answered: its three members, read strictly. */
export interface GatesAnswer {
  gates: JsonValue;
  passed: JsonValue;
  results: JsonValue;
}

async function readGatesAnswer(api: ServiceApi): Promise<GatesAnswer> {
  const { body } = await api.workspaceText('GET', 'grc/gates/check');
  const answer = readReply(body, 'the gates check', { required: ['gates', 'passed', 'results'] });
  return { gates: answer.gates, passed: answer.passed, results: answer.results };
}

/** A whole gate policy (every framework's mode and threshold), or why a value is not one. */
function wholePolicy(value: JsonValue): { policy: GatePolicy } | { problem: string } {
  const issues = validateGatePolicy(value);
  if (issues.length > 0) return { problem: `${issues[0].path} ${issues[0].message}` };
  const policy = {} as Record<Framework, GateRule>;
  for (const framework of FRAMEWORKS) {
    const rule = (value as Record<string, Partial<GateRule> | undefined>)[framework];
    if (rule?.mode === undefined || rule.threshold === undefined) return { problem: `policy.${framework} has no mode or no threshold` };
    policy[framework] = { mode: rule.mode, threshold: rule.threshold };
  }
  return { policy };
}

/**
 * The gate policy as logged (step 3). Every change GET grc/gates/policy returns is read strictly
 * and checked against its `gate_policy` leaf like any record (one with no leaf in the audited
 * tree is proven against a later checkpoint by {@link checkLaterRecords}). Returns the policy the
 * service says is in force.
 */
export async function readPolicyLog(api: ServiceApi, leaves: Leaves, read: RecordsRead, workspaceId: string, problems: Problems): Promise<JsonValue> {
  let body: string;
  try {
    body = (await api.workspaceText('GET', 'grc/gates/policy')).body;
  } catch (error) {
    if (error instanceof NotFoundError)
      throw new LedgerCheckError('the service answers no gate policy log (GET grc/gates/policy: 404): it does not log its gate policy');
    throw error;
  }
  const answer = readReply(body, 'the gate policy log', { required: ['policy', 'changes'] });
  if (!Array.isArray(answer.changes)) throw new LedgerCheckError('the gate policy log holds no list of changes');
  for (const value of answer.changes) {
    const item = storedRecord(value, 'gate_policy');
    if ('problem' in item) {
      malformedRecord(leaves, read, problems, 'gate_policy', item.id, item.problem);
      continue;
    }
    const { id, record } = item;
    const whole = wholePolicy(record.policy);
    if ('problem' in whole) {
      malformedRecord(leaves, read, problems, 'gate_policy', id, `its ${whole.problem}`);
      continue;
    }
    if (record.workspace_id !== workspaceId) problems.add(`gate_policy ${shown(id)} is for workspace ${canonicalize(record.workspace_id)}`);
    const index = matchLeaf(leaves, read, problems, 'gate_policy', id, record, whole.policy);
    if (index !== undefined) read.policies.push({ leafIndex: index, changeId: id, policy: whole.policy });
  }
  return answer.policy;
}

/**
 * The policy the gates are judged under (step 5): the latest change whose leaf verified (in the
 * audited tree, or proven in a later checkpoint). The policy the service says is in force must be
 * that one: one the log does not hold is named.
 */
export function checkPolicy(stated: JsonValue, read: RecordsRead, problems: Problems): PolicyInForce {
  let latest: LoggedPolicy | undefined;
  for (const change of read.policies) if (latest === undefined || change.leafIndex > latest.leafIndex) latest = change;
  if (latest === undefined) {
    problems.add('gate policy: the log holds no gate policy change the service returns: gates judged under the default policy');
    if (canonicalize(stated) !== canonicalize(DEFAULT_GATE_POLICY))
      problems.add('gate policy: the service judges its gates under a policy in force that the log does not hold');
    return { policy: DEFAULT_GATE_POLICY, source: 'the default (the log holds none)' };
  }
  if (canonicalize(stated) !== canonicalize(latest.policy)) {
    problems.add(
      `gate policy: the service judges its gates under a policy in force that the log does not hold (the latest logged change, ${shown(latest.changeId)} at leaf ${latest.leafIndex}, says ${canonicalize(latest.policy)}; the service ${canonicalize(stated)})`,
    );
  }
  return { policy: latest.policy, source: `logged: ${latest.changeId} at leaf ${latest.leafIndex}` };
}

/** A figure the service states, for the report beside the verified one (null when it states none). */
function statedNumber(value: unknown): number | null {
  return typeof value === 'number' ? value : null;
}

/**
 * Step 6a: the posture brief against the scores recomputed from the verified records: every
 * member (overall, each framework, the failing gates); `unattested_24h` counts systems the log
 * does not hold (registrations), so only its form is checked.
 */
export async function checkPosture(
  api: ServiceApi,
  byFramework: readonly FrameworkCoverage[],
  gates: readonly Gate[],
  problems: Problems,
): Promise<AuditReport['posture']> {
  const { body } = await api.workspaceText('GET', 'grc/posture-brief');
  const brief = readReply(body, 'the posture brief', { required: ['overall_pct', 'frameworks', 'failing_gates', 'unattested_24h'] });
  const scores = scoresFrom(byFramework);
  if (brief.overall_pct !== scores.overall_pct) {
    problems.add(
      `posture: the service states overall ${canonicalize(brief.overall_pct)} %, the verified records support ${scores.overall_pct} % (a forged coverage table?)`,
    );
  }
  const stated = new Map<string, JsonValue>();
  for (const entry of Array.isArray(brief.frameworks) ? brief.frameworks : []) {
    if (isPlainObject(entry) && typeof entry.framework === 'string' && !FRAMEWORKS.includes(entry.framework as Framework)) {
      problems.add(`posture: the service states a framework ${shown(entry.framework)} that this govctl's control catalogue does not hold`);
      continue;
    }
    const shape = isPlainObject(entry) ? shapeProblem(entry, { required: ['framework', 'score_pct'] }) : 'not an object';
    if (shape !== undefined || !isPlainObject(entry) || typeof entry.framework !== 'string') {
      problems.add(`posture: a framework of the posture brief is not one the service writes (${shape ?? 'no framework'})`);
      continue;
    }
    if (stated.has(entry.framework)) problems.add(`posture: the service states ${shown(entry.framework)} twice`);
    stated.set(entry.framework, entry.score_pct);
  }
  const frameworks = scores.frameworks.map((own) => {
    const score = stated.get(own.framework);
    if (score !== own.score_pct)
      problems.add(
        `posture: ${own.framework} is ${score === undefined ? 'missing' : canonicalize(score)} % at the service, ${own.score_pct} % from the verified records`,
      );
    return { framework: own.framework, service: statedNumber(score), verified: own.score_pct };
  });
  const failing = failingGateFrameworks(gates);
  if (canonicalize(brief.failing_gates) !== canonicalize(failing))
    problems.add(`posture: the service states failing gates ${canonicalize(brief.failing_gates)}, the verified records ${canonicalize(failing)}`);
  if (wholeNumber(brief.unattested_24h) === undefined) problems.add('posture: unattested_24h is not a whole number');
  return { overall_pct: { service: statedNumber(brief.overall_pct), verified: scores.overall_pct }, frameworks };
}

/**
 * Step 6b: gates/check against the gates recomputed from the verified records under the policy:
 * every member of every gate, `passed`, and every member of every result.
 */
export function checkGates(
  answer: GatesAnswer,
  byFramework: readonly FrameworkCoverage[],
  own: readonly Gate[],
  policy: GatePolicy,
  problems: Problems,
): { gates: AuditReport['gates']; passed: AuditReport['passed'] } {
  // gates[]: each as recomputed, member for member
  const statedGates = Array.isArray(answer.gates) ? answer.gates : [];
  if (!Array.isArray(answer.gates)) problems.add('gates: the gates check holds no list of gates');
  const byId = new Map<string, Record<string, JsonValue>>();
  for (const gate of statedGates) {
    if (isPlainObject(gate) && typeof gate.gate_id === 'string' && !own.some((g) => g.gate_id === gate.gate_id)) {
      problems.add(`gates: the service judges a gate ${shown(gate.gate_id)} that this govctl's control catalogue does not hold`);
      continue;
    }
    const shape = isPlainObject(gate) ? shapeProblem(gate, GATE_SHAPE) : 'not an object';
    if (shape !== undefined || !isPlainObject(gate) || typeof gate.gate_id !== 'string') {
      problems.add(`gates: a gate of the gates check is not one the service writes (${shape ?? 'no gate_id'})`);
      continue;
    }
    if (byId.has(gate.gate_id)) problems.add(`gates: the service states ${shown(gate.gate_id)} twice`);
    byId.set(gate.gate_id, gate);
  }
  for (const gate of own) {
    const stated = byId.get(gate.gate_id);
    if (stated === undefined) {
      problems.add(`gates: the service states no ${gate.gate_id}`);
      continue;
    }
    const members = GATE_SHAPE.required
      .concat(GATE_SHAPE.optional)
      .filter((member) => canonicalize(stated[member] ?? null) !== canonicalize((gate as unknown as Record<string, unknown>)[member] ?? null));
    if (members.length > 0) {
      const passing =
        stated.passing === gate.passing
          ? ''
          : ` (${stated.passing === true ? 'passing' : 'failing'} at the service, ${gate.passing ? 'passing' : 'failing'} from the verified records)`;
      problems.add(`gates: ${gate.gate_id} differs from the gate recomputed from the verified records in ${members.join(', ')}${passing}`);
    }
  }
  const passed = own.every((gate) => gate.passing || !gate.blocking);
  if (answer.passed !== passed) problems.add(`gates: the service states passed ${canonicalize(answer.passed)}, the verified records ${String(passed)}`);

  // results[]: each framework's standing, as recomputed
  const statedResults = new Map<string, Record<string, JsonValue>>();
  if (!Array.isArray(answer.results)) problems.add('gates: the gates check holds no list of results');
  for (const result of Array.isArray(answer.results) ? answer.results : []) {
    if (isPlainObject(result) && typeof result.framework === 'string' && !FRAMEWORKS.includes(result.framework as Framework)) {
      problems.add(`gates: the service judges a framework ${shown(result.framework)} that this govctl's control catalogue does not hold`);
      continue;
    }
    const shape = isPlainObject(result) ? shapeProblem(result, RESULT_SHAPE) : 'not an object';
    if (shape !== undefined || !isPlainObject(result) || typeof result.framework !== 'string') {
      problems.add(`gates: a result of the gates check is not one the service writes (${shape ?? 'no framework'})`);
      continue;
    }
    if (statedResults.has(result.framework)) problems.add(`gates: the service states a result for ${shown(result.framework)} twice`);
    statedResults.set(result.framework, result);
  }
  const gates = byFramework.map((entry, at) => {
    const rule = policy[entry.framework];
    const status = own[at].passing ? ('passing' as const) : ('failing' as const);
    const expected = { framework: entry.framework, mode: rule.mode, threshold_pct: rule.threshold, current_pct: entry.score_pct, status };
    const stated = statedResults.get(entry.framework);
    if (stated === undefined) problems.add(`gates: the service states no result for ${entry.framework}`);
    else if (stated.status !== status) {
      const said = typeof stated.status === 'string' ? shown(stated.status) : canonicalize(stated.status);
      problems.add(`gates: ${entry.framework} is ${said} at the service, ${status} from the verified records (${entry.score_pct} % vs ${rule.threshold} %)`);
    } else {
      const members = RESULT_SHAPE.required.filter((member) => canonicalize(stated[member]) !== canonicalize(expected[member as keyof typeof expected]));
      if (members.length > 0)
        problems.add(`gates: the result for ${entry.framework} differs from the one recomputed from the verified records in ${members.join(', ')}`);
    }
    const service: 'passing' | 'failing' | null = stated?.status === 'passing' ? 'passing' : stated?.status === 'failing' ? 'failing' : null;
    return { framework: entry.framework, mode: rule.mode, threshold_pct: rule.threshold, service, verified: status };
  });
  return { gates, passed: { service: typeof answer.passed === 'boolean' ? answer.passed : null, verified: passed } };
}

/** The whole audit: the steps above, in order, over one verified checkpoint. */
export async function auditLog(options: AuditOptions): Promise<AuditReport> {
  const { api, log, workspaceId, nowMs } = options;
  const onProgress = options.onProgress ?? (() => {});
  const problems = new Problems();
  const { opened } = await fetchCheckpoint(api, log);
  const { size, rootHash, origin } = opened.checkpoint;

  const leaves = await readLog(api, opened, workspaceId, problems, onProgress);
  const read = await checkRecords(api, leaves, options, problems, onProgress);
  const statedPolicy = await readPolicyLog(api, leaves, read, workspaceId, problems);
  onProgress({ phase: 'records', done: read.returned, total: size });
  checkEveryLeafReturned(leaves, problems);
  const loggedAfter = await checkLaterRecords(api, log, opened, read, workspaceId, problems);

  const { policy, source } = checkPolicy(statedPolicy, read, problems);
  const answer = await readGatesAnswer(api);
  const byFramework = coverageByFramework(read.coverage, nowMs());
  const own = gatesFrom(byFramework, policy);
  const posture = await checkPosture(api, byFramework, own, problems);
  const { gates, passed } = checkGates(answer, byFramework, own, policy, problems);

  return {
    origin,
    tree_size: size,
    root_hash: rootHash.toString('base64'),
    records: read.evidence + read.attestations,
    evidence: read.evidence,
    attestations: read.attestations,
    verdicts: read.verdicts,
    gate_policy_changes: read.policies.length,
    client_sig_unchecked: read.clientSigUnchecked,
    logged_after_checkpoint: loggedAfter,
    policy: source,
    posture,
    gates,
    passed,
    problems: problems.all(),
  };
}
