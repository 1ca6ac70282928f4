/**
 * `govctl ledger audit`: the whole log, checked from the outside, in bulk. Downloads every entry
 * bundle of the verified checkpoint's tree and recomputes the root with a {@link CompactTree};
 * keeps of each leaf only what the records are checked against (its id, kind and 32-byte digest,
 * never a record); then reads every stored record in bulk — evidence from the export a page at a
 * time, attestations from the list a page at a time, all time — and checks each against its
 * leaf's sha256 and its signatures. Every leaf's record must be returned exactly once, and every
 * record returned must have a leaf (one without was stored without being logged). Posture and
 * gates are then recomputed from the verified evidence and compared with what the service states.
 * Every discrepancy is named; any exits 2. A forged coverage table, which no proof of a single
 * record can see, shows up here as a score the records do not support.
 *
 * Requests: one per entry bundle (256 leaves), one per export page (250 records), one per
 * attestation list page (200), never one per record — except a lookup of each record returned
 * without a leaf in the audited tree (normally only those written during the audit).
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
  LedgerFormatError,
  parseJsonLossless,
  parseLedgerEntry,
  scoresFrom,
  tilePath,
  type JsonValue,
} from '../../core/index.js';
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../../core/hashing.js';
import { NotFoundError } from '../../client/errors.js';
import type { EvidenceExportPage, ServiceApi } from '../../client/api.js';
import { fetchCheckpoint, LedgerCheckError } from './checks.js';
import type { Ed25519NoteVerifier } from '../../core/index.js';

/**
 * Evidence records per export request (about 175 KB of text). Smaller than the export command's
 * pages: each page here is parsed, and measured over 100 000 records (bench/ledger-audit.mjs),
 * pages of 1000 peaked at about 180 MB RSS, 500 at 150–180 MB, 250 at 145 MB, within 5 % of
 * the same time (the page texts are large objects, freed only by a full collection).
 */
const EVIDENCE_PAGE = 250;

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
  /** records returned with no leaf in the audited tree whose write the log holds a later leaf for (written during the audit) */
  logged_after_checkpoint: number;
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

/** Most problems listed one by one; the rest are counted. */
const MAX_LISTED = 200;

/** Entry bundles requested ahead of the one being read (order kept; memory stays a few bundles). */
const BUNDLES_AHEAD = 4;

/** Attestations per list request: the list's maximum page. */
const ATTESTATION_PAGE = 200;

/**
 * `since` of the attestation list that covers all time: the earliest instant an ISO 8601 date-time
 * with a zone can name (year 0000 at +23:59), so no stored attestation falls before it.
 */
const ALL_TIME = '0000-01-01T00:00:00+23:59';

/**
 * Records returned without a leaf in the audited tree that are looked up one by one
 * (proof/inclusion: 404 means never logged). Past this many, the rest are named unlooked: more
 * than this written while the audit ran is itself unusual (docs/ledger.md "ledger audit").
 */
const MAX_LOOKUPS = 1000;

/**
 * Records the service may return beyond the audited tree's size (those written while the audit
 * runs) before the audit stops reading. An honest service returns each stored record once, so one
 * that pages on past this is looping or making records up, and the audit must still end.
 */
const MAX_EXTRA_RECORDS = 100_000;

const KIND_EVIDENCE = 0;
const KIND_ATTESTATION = 1;
/** a leaf whose entry did not parse: no record is expected for it */
const KIND_NONE = 2;

/**
 * A ledger entry in the one form the log writes (canonical JSON, printable ASCII without escapes),
 * read without a JSON parse: 100 000 entries are read per audit. Anything else goes to
 * {@link parseLedgerEntry}, which accepts no more than this (the canonical form, exactly).
 */
const PLAIN_ENTRY =
  /^\{"id":"([\x20\x21\x23-\x5b\x5d-\x7e]*)","kind":"([a-z]+)","received_at":"[\x20\x21\x23-\x5b\x5d-\x7e]*","sha256":"([0-9a-f]{64})","workspace_id":"([\x20\x21\x23-\x5b\x5d-\x7e]*)"\}$/;

/** The members of an entry the audit uses. @throws LedgerFormatError (from parseLedgerEntry) for a malformed one */
function entryOf(bytes: Buffer): { id: string; kind: string; sha256: string; workspace_id: string } {
  const plain = bytes.length < 1024 ? PLAIN_ENTRY.exec(bytes.toString('latin1')) : null;
  if (plain !== null) return { id: plain[1], kind: plain[2], sha256: plain[3], workspace_id: plain[4] };
  return parseLedgerEntry(bytes);
}

/** A value spliced in place of a payload's text (quickDigest), random per run so that no line can carry it. */
const SLICE_SENTINEL_VALUE = `govctl-payload-${randomBytes(16).toString('hex')}`;
const SLICE_SENTINEL = JSON.stringify(SLICE_SENTINEL_VALUE);

/** Whether a value parsed by JSON.parse holds a number anywhere (whose written form JSON.parse loses). */
function holdsNumber(value: unknown): boolean {
  if (typeof value === 'number') return true;
  if (Array.isArray(value)) return value.some(holdsNumber);
  if (value !== null && typeof value === 'object') return Object.values(value).some(holdsNumber);
  return false;
}

/** How an export line's payload member starts (the members before it never hold it unescaped). */
const PAYLOAD_MEMBER = ',"payload":';

/**
 * The SHA-256 (hex) of the canonical JSON an export line would have if its `payload` text is
 * already canonical (as the service stores it): the other members, read with JSON.parse (exact
 * for strings, booleans and arrays of them) and canonicalised, with the payload's text spliced in
 * at its sorted place, so the payload (most of the line) is never parsed. Undefined when the line
 * does not have that shape (a member holding a number, no payload found).
 *
 * A match with the leaf's digest proves the line is the committed record (the spliced text is the
 * committed canonical text, byte for byte); a mismatch proves nothing, and the caller then checks
 * the line the slow way (lossless parse, canonicalize), which decides.
 */
function quickDigest(line: string, record: Record<string, unknown>): string | undefined {
  const start = line.indexOf(PAYLOAD_MEMBER);
  const textStart = start + PAYLOAD_MEMBER.length;
  // the members after the payload are strings, booleans and a list of strings: none holds `,"client_sig":` or `,"source":` unescaped
  const end = line.lastIndexOf(record.client_sig !== undefined ? ',"client_sig":' : ',"source":');
  if (start === -1 || end <= start) return undefined;
  // The slice must be the payload every JSON reader sees: with it replaced by a value nobody can
  // guess, the line must still parse with that value as its payload (a later "payload" member, or
  // a `,"payload":` found inside another member, would otherwise pass the committed text while the
  // line says something else).
  try {
    if ((JSON.parse(`${line.slice(0, textStart)}${SLICE_SENTINEL}${line.slice(end)}`) as Record<string, unknown>).payload !== SLICE_SENTINEL_VALUE)
      return undefined;
  } catch {
    return undefined;
  }
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  for (const key of Object.keys(record)) {
    if (key === 'payload') continue;
    const value = record[key];
    if (holdsNumber(value)) return undefined;
    if (key < 'payload') before[key] = value;
    else after[key] = value;
  }
  const head = canonicalize(before);
  const tail = canonicalize(after);
  const text = `${head === '{}' ? '{' : `${head.slice(0, -1)},`}"payload":${line.slice(textStart, end)}${tail === '{}' ? '}' : `,${tail.slice(1)}`}`;
  return sha256Hex(text);
}

/**
 * What the audit keeps of each leaf, in typed arrays (about 60 bytes a leaf, never a record nor
 * its id): an open-addressing table from a 64-bit hash of the leaf's id to its index, and per leaf
 * its kind, the digest its entry commits to and whether its record was returned. A Map of id
 * strings cost about 165 bytes a leaf (289 MB peak RSS over 1 000 000 leaves).
 *
 * The hash is seeded afresh each run, so the service cannot choose ids that collide; and a
 * collision could only make a record meet another leaf's digest, which also commits to the id:
 * a problem named, never a record passed.
 */
class Leaves {
  readonly digests: Buffer;
  readonly kinds: Uint8Array;
  readonly seen: Uint8Array;
  readonly #mask: number;
  readonly #hi: Uint32Array;
  readonly #lo: Uint32Array;
  /** leaf index + 1 per slot; 0: empty */
  readonly #slots: Uint32Array;
  readonly #seed = randomBytes(8);
  #h1 = 0;
  #h2 = 0;

  constructor(readonly size: number) {
    this.digests = Buffer.alloc(size * 32);
    this.kinds = new Uint8Array(size).fill(KIND_NONE);
    this.seen = new Uint8Array(size);
    let capacity = 16;
    while (capacity < size * 2) capacity *= 2;
    this.#mask = capacity - 1;
    this.#hi = new Uint32Array(capacity);
    this.#lo = new Uint32Array(capacity);
    this.#slots = new Uint32Array(capacity);
  }

  /** Two 32-bit seeded hashes of an id (FNV-1a and a multiply-xorshift), into #h1 and #h2. */
  #hash(id: string): void {
    let h1 = (this.#seed.readUInt32LE(0) ^ 0x811c9dc5) >>> 0;
    let h2 = this.#seed.readUInt32LE(4);
    for (let i = 0; i < id.length; i++) {
      const c = id.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995);
      h2 ^= h2 >>> 15;
    }
    this.#h1 = h1 >>> 0;
    this.#h2 = (h2 ^ id.length) >>> 0;
  }

  /** The slot of an id: where it is, or the empty slot where it would go. */
  #slot(id: string): number {
    this.#hash(id);
    let at = this.#h1 & this.#mask;
    while (this.#slots[at] !== 0 && (this.#hi[at] !== this.#h1 || this.#lo[at] !== this.#h2)) at = (at + 1) & this.#mask;
    return at;
  }

  /** The leaf index of an id, or undefined. */
  get(id: string): number | undefined {
    const slot = this.#slots[this.#slot(id)];
    return slot === 0 ? undefined : slot - 1;
  }

  /** Records an id at a leaf; the earlier leaf when the id is there already (nothing recorded). */
  add(id: string, index: number): number | undefined {
    const at = this.#slot(id);
    if (this.#slots[at] !== 0) return this.#slots[at] - 1;
    this.#hi[at] = this.#h1;
    this.#lo[at] = this.#h2;
    this.#slots[at] = index + 1;
    return undefined;
  }
}

export async function auditLog(
  api: ServiceApi,
  log: Ed25519NoteVerifier,
  workspaceId: string,
  nowMs: () => number,
  signingKey: SigningKey | undefined,
  onProgress: (progress: AuditProgress) => void = () => {},
): Promise<AuditReport> {
  const { opened } = await fetchCheckpoint(api, log);
  const { size, rootHash, origin } = opened.checkpoint;
  const problems: string[] = [];
  let unlisted = 0;
  const problem = (text: string) => {
    if (problems.length < MAX_LISTED) problems.push(text);
    else unlisted += 1;
  };

  // 1. The log: every entry, the root recomputed, each leaf's expectation kept.
  const leaves = new Leaves(size);
  const tree = CompactTree.empty();
  const bundles = [...entryBundlesForSize(size)];
  const fetchBundle = (at: number) => {
    const path = tilePath(bundles[at]);
    const reply = api.workspaceBytes(`ledger/${path}`);
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
      throw new LedgerCheckError(`${path} is malformed: ${terminalText((error as Error).message)}`);
    }
    for (const [i, bytes] of entries.entries()) {
      const index = bundle.index * 256 + i;
      tree.append(leafHash(bytes));
      let entry;
      try {
        entry = entryOf(bytes);
      } catch (error) {
        problem(`leaf ${index}: the entry is malformed (${terminalText((error as Error).message)})`);
        continue;
      }
      if (entry.workspace_id !== workspaceId) problem(`leaf ${index}: the entry is for workspace ${terminalText(entry.workspace_id)}`);
      if (entry.kind !== 'evidence' && entry.kind !== 'attestation') {
        problem(`leaf ${index}: the entry is of an unknown kind ${terminalText(entry.kind)}`);
        continue;
      }
      const earlier = leaves.add(entry.id, index);
      if (earlier !== undefined) {
        problem(`leaf ${index}: ${entry.kind} ${terminalText(entry.id)} is logged again (first at leaf ${earlier})`);
        continue;
      }
      leaves.kinds[index] = entry.kind === 'attestation' ? KIND_ATTESTATION : KIND_EVIDENCE;
      leaves.digests.write(entry.sha256, index * 32, 32, 'hex');
    }
    onProgress({ phase: 'log', done: Math.min((at + 1) * 256, size), total: size });
  }
  if (!tree.root().equals(rootHash)) {
    problem(`the entries served for leaves 0..${size - 1} do not hash to the signed root: the stored log was altered (entries changed, removed or reordered)`);
  }

  // 2. Every stored record, in bulk, against its leaf.
  // control id → latest ms a verified record earned it (the same rule as the service: the earlier
  // of occurred_at and received_at, so future-dating cannot inflate freshness)
  const coverage = new Map<string, number>();
  let evidence = 0;
  let attestations = 0;
  let unchecked = 0;
  let checked = 0;
  /** records returned with no leaf in the audited tree, to look up (up to MAX_LOOKUPS) */
  const unlogged: { kind: string; id: string }[] = [];
  let unloggedUnlooked = 0;

  /** The leaf a returned record stands for after its digest matched, or undefined (named). */
  const leafOf = (kind: 'evidence' | 'attestation', id: string, digestOf: () => string, quick?: string): number | undefined => {
    checked += 1;
    const index = leaves.get(id);
    if (index === undefined) {
      if (unlogged.length < MAX_LOOKUPS) unlogged.push({ kind, id });
      else unloggedUnlooked += 1;
      return undefined;
    }
    if (leaves.seen[index] > 0) {
      problem(`leaf ${index}: ${kind} ${terminalText(id)} is returned more than once`);
      return undefined;
    }
    leaves.seen[index] = 1;
    const logged = leaves.kinds[index] === KIND_ATTESTATION ? 'attestation' : 'evidence';
    if (logged !== kind) {
      problem(`leaf ${index}: ${terminalText(id)} is logged as ${logged} but returned as ${kind}`);
      return undefined;
    }
    const committed = leaves.digests.toString('hex', index * 32, index * 32 + 32);
    if (quick !== committed && digestOf() !== committed) {
      problem(`leaf ${index}: ${kind} ${terminalText(id)} as returned is not what the log committed to (changed in storage)`);
      return undefined;
    }
    return index;
  };

  /**
   * Whether to read on after `position` (the export's last record id, the list's cursor): not
   * when the service answers a position it answered before (it would loop for ever) or has
   * returned far more records than the tree holds. Named past the cap on listed problems (at
   * most two such lines): that the audit stopped matters more than its 200th duplicate.
   */
  const positions = new Set<string>();
  const readOn = (source: string, position: string): boolean => {
    if (positions.has(`${source}\u0000${position}`)) {
      problems.push(`the ${source} came back to a page it had returned (after ${terminalText(position)}): stopped reading it`);
      return false;
    }
    if (checked > size + MAX_EXTRA_RECORDS) {
      problems.push(`the service returned ${checked} records for a log of size ${size}: stopped reading (each record is returned once)`);
      return false;
    }
    positions.add(`${source}\u0000${position}`);
    return true;
  };

  // Evidence: the export, all time, the next page asked for while this one is checked.
  let page: Promise<EvidenceExportPage> | undefined = api.exportEvidence({ limit: EVIDENCE_PAGE });
  while (page !== undefined) {
    const current: EvidenceExportPage = await page;
    const more = current.count >= EVIDENCE_PAGE && current.lastRecordId !== undefined && readOn('evidence export', current.lastRecordId);
    page = more ? api.exportEvidence({ limit: EVIDENCE_PAGE, after: current.lastRecordId }) : undefined;
    page?.catch(() => {}); // awaited on the next turn
    const text = current.text;
    for (let start = 0; start < text.length;) {
      const end = text.indexOf('\n', start);
      const line = text.slice(start, end === -1 ? undefined : end);
      start = end === -1 ? text.length : end + 1;
      if (line === '') continue;
      // JSON.parse first (native, exact for every member but the payload's numbers, which are
      // never read from it): the digest is checked with the payload's text, and only a line that
      // does not match, or a signature to check, is parsed losslessly.
      let quick: Record<string, unknown>;
      try {
        quick = JSON.parse(line) as Record<string, unknown>;
      } catch {
        quick = {};
      }
      let lossless: Record<string, JsonValue> | undefined;
      const exact = (): Record<string, JsonValue> => (lossless ??= parseJsonLossless(line) as Record<string, JsonValue>);
      if (!isPlainObject(quick) || typeof quick.record_id !== 'string') {
        problem('the evidence export returned a line that is not a stored record');
        continue;
      }
      const recordId = quick.record_id;
      const slowDigest = () => {
        try {
          return sha256Hex(canonicalize(exact()));
        } catch {
          return 'not JSON the service writes';
        }
      };
      const index = leafOf('evidence', recordId, slowDigest, quickDigest(line, quick));
      if (index === undefined) continue;
      evidence += 1;
      if (quick.client_sig !== undefined && quick.client_sig !== null) {
        if (signingKey === undefined) unchecked += 1;
        else if (!verifyClientSig(exact(), workspaceId, signingKey))
          problem(`leaf ${index}: evidence ${terminalText(recordId)}: client_sig does not verify with the configured signing key`);
      }
      const record = quick;
      const earned = Math.min(Date.parse(String(record.occurred_at)), Date.parse(String(record.received_at)));
      const controls = Array.isArray(record.mapped_controls) ? record.mapped_controls : [];
      for (const control of controls) {
        if (typeof control !== 'string') continue;
        const previous = coverage.get(control);
        if (previous === undefined || earned > previous) coverage.set(control, earned);
      }
    }
    onProgress({ phase: 'records', done: checked, total: size });
  }

  // Attestations: the list, all time, a page at a time (each item the body GET by id returns).
  for (let cursor: string | undefined, first = true; first || cursor !== undefined; first = false) {
    const list = await api.listAttestations({ since: ALL_TIME, limit: ATTESTATION_PAGE, ...(cursor !== undefined ? { cursor } : {}) });
    cursor = typeof list.next_cursor === 'string' ? list.next_cursor : undefined;
    for (const item of Array.isArray(list.attestations) ? list.attestations : []) {
      const record = item as unknown as Record<string, JsonValue>;
      if (!isPlainObject(record) || typeof record.attestation_id !== 'string') {
        problem('the attestation list returned an item that is not a stored attestation');
        continue;
      }
      const id = record.attestation_id;
      const index = leafOf('attestation', id, () => sha256Hex(canonicalize(record)));
      if (index === undefined) continue;
      attestations += 1;
      // The trust tier must be what the witness signature supports, checked here again.
      // `record` is the attestation as sent (and signed); `detail` says why a verified signature
      // earned only `declared` (the workspace's key policy).
      const attestation = record.record;
      if (isPlainObject(attestation)) {
        const signed = attestation.witness_sig !== undefined && attestation.witness_sig !== null;
        const form = signed ? verifyWitness(attestation, workspaceId) : null;
        if (signed && form === null) problem(`leaf ${index}: attestation ${terminalText(id)}: witness_sig does not verify with its verifying_key_hex`);
        const unsupported = record.trust_tier === 'witnessed' ? form === null : form !== null && record.detail === 'ok';
        if (unsupported)
          problem(
            `leaf ${index}: attestation ${terminalText(id)} is ${terminalText(typeof record.trust_tier === 'string' ? record.trust_tier : JSON.stringify(record.trust_tier))}, which its signature does not support`,
          );
      } else problem(`leaf ${index}: attestation ${terminalText(id)} carries no attestation record`);
    }
    onProgress({ phase: 'records', done: checked, total: size });
    if (cursor !== undefined && !readOn('attestation list', cursor)) cursor = undefined;
  }

  // Every leaf's record returned?
  // (ids are not kept: those of the leaves to name are read again from their entry bundles)
  const unseen: number[] = [];
  for (let index = 0; index < size; index++) {
    if (leaves.seen[index] !== 0 || leaves.kinds[index] === KIND_NONE) continue;
    if (problems.length + unseen.length < MAX_LISTED) unseen.push(index);
    else unlisted += 1;
  }
  for (let at = 0; at < unseen.length;) {
    const bundle = bundles[Math.floor(unseen[at] / 256)];
    let entries: Buffer[] = [];
    try {
      entries = decodeEntryBundle(await api.workspaceBytes(`ledger/${tilePath(bundle)}`), bundle.width);
    } catch (error) {
      if (!(error instanceof NotFoundError) && !(error instanceof LedgerFormatError)) throw error;
    }
    for (; at < unseen.length && Math.floor(unseen[at] / 256) === bundle.index; at++) {
      const index = unseen[at];
      const kind = leaves.kinds[index] === KIND_ATTESTATION ? 'attestation' : 'evidence';
      const bytes = entries[index % 256];
      let entry;
      try {
        entry = bytes === undefined ? undefined : entryOf(bytes);
      } catch {
        entry = undefined;
      }
      if (entry === undefined || entry.sha256 !== leaves.digests.toString('hex', index * 32, index * 32 + 32)) {
        problem(`leaf ${index}: the service served another entry for this leaf on a second read`);
      } else problem(`leaf ${index}: ${kind} ${terminalText(entry.id)} is logged but the service no longer returns it (deleted)`);
    }
  }
  // Every record returned logged? One without a leaf in this tree was either written during the
  // audit (the log holds a later leaf: proof/inclusion answers) or never logged (404).
  let loggedAfter = 0;
  for (const { kind, id } of unlogged) {
    try {
      await api.workspaceText('GET', `ledger/proof/inclusion?id=${encodeURIComponent(id)}`);
      loggedAfter += 1;
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      problem(`${kind} ${terminalText(id)} is stored but the log holds no entry for it (stored without being logged)`);
    }
  }
  if (unloggedUnlooked > 0) {
    problem(
      `${unloggedUnlooked} more records are stored with no leaf in the log at size ${size} (not looked up one by one: stored without being logged, or written while the audit ran)`,
    );
  }

  // 3. Posture and gates from the verified records, at the instant of the comparison.
  const brief = parseJsonLossless((await api.workspaceText('GET', 'grc/posture-brief')).body) as {
    overall_pct?: unknown;
    frameworks?: { framework: string; score_pct: unknown }[];
  };
  const byFramework = coverageByFramework(coverage, nowMs());
  const scores = scoresFrom(byFramework);
  if (Number(brief.overall_pct) !== scores.overall_pct) {
    problem(
      `posture: the service states overall ${String(brief.overall_pct)} %, the verified records support ${scores.overall_pct} % (a forged coverage table?)`,
    );
  }
  for (const own of scores.frameworks) {
    const stated = brief.frameworks?.find((f) => f.framework === own.framework);
    if (!stated || Number(stated.score_pct) !== own.score_pct) {
      problem(`posture: ${own.framework} is ${stated ? String(stated.score_pct) : 'missing'} % at the service, ${own.score_pct} % from the verified records`);
    }
  }
  for (const stated of brief.frameworks ?? []) {
    if (!scores.frameworks.some((own) => own.framework === stated.framework)) {
      problem(`posture: the service states a framework ${terminalText(String(stated.framework))} that this govctl's control catalogue does not hold`);
    }
  }
  const gates = parseJsonLossless((await api.workspaceText('GET', 'grc/gates/check')).body) as {
    results?: { framework: string; threshold_pct: unknown; status: string }[];
  };
  for (const result of gates.results ?? []) {
    const own = byFramework.find((f) => f.framework === result.framework);
    if (!own) {
      problem(`gates: the service judges a framework ${terminalText(String(result.framework))} that this govctl's control catalogue does not hold`);
      continue;
    }
    const passing = own.score_pct >= Number(result.threshold_pct);
    if ((result.status === 'passing') !== passing) {
      problem(
        `gates: ${result.framework} is ${result.status} at the service, ${passing ? 'passing' : 'failing'} from the verified records (${own.score_pct} % vs ${String(result.threshold_pct)} %)`,
      );
    }
  }
  if (unlisted > 0) problems.push(`… and ${unlisted} more`);
  return {
    origin,
    tree_size: size,
    root_hash: rootHash.toString('base64'),
    records: evidence + attestations,
    evidence,
    attestations,
    client_sig_unchecked: unchecked,
    logged_after_checkpoint: loggedAfter,
    problems,
  };
}
