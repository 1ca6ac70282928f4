/**
 * Several `govctl serve` processes on one PostgreSQL database (issue 15): writes from several
 * workspaces spread over three replicas; the replica holding the log's integration lease SIGKILLed
 * during writes (the others take the lease over), and PostgreSQL itself SIGKILLed during writes
 * and restarted on its data directory; then no acknowledged record is lost, every workspace's log
 * is one dense sequence whose leaf indexes are the ones the writes were given, and its checkpoints
 * verify with the independent Python implementation (ledger_service_check.py: RFC 9162 and C2SP
 * written from the texts) over entries read from the entry tiles. (replicas.test.ts has the
 * budgets, sequential and concurrent, revocation at every replica and an idempotency key across
 * two replicas.)
 *
 * The cluster is this file's own (it is killed). Everything is bounded: writers stop by count,
 * waits on the writers are told by the writers themselves, waits on a process are bounded polls of
 * what it serves; the lease's expiry is the replicas' wall clock (real processes), so its takeover
 * is awaited with a bound, never a sleep.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, makeTempDir } from '../../helpers/cli.js';
import { startCluster, withClient, type PostgresCluster } from '../../helpers/postgres.js';
import { runPythonJson } from '../../helpers/python.js';
import { startReplica, type Replica } from '../../helpers/replicas.js';
import { attestation, call, evidenceRecord, wsPath, type Reply } from '../../helpers/service-requests.js';

const dir = makeTempDir('govctl-replicas-');
const logKey = join(dir, 'ledger-key');
let cluster: PostgresCluster;
let db: string;
const replicas: Replica[] = [];
const everyReplica: Replica[] = [];

interface Workspace {
  id: string;
  apiKey: string;
  /** every acknowledged write: record id → the leaf index its answer gave */
  acked: Map<string, number>;
  /** checkpoints seen (signed notes), to verify each against the final log */
  checkpoints: string[];
  /** acknowledged ids already read back by id (a replica's death loses no rows: only new ones are read again) */
  read: Set<string>;
}
const workspaces: Workspace[] = [];

async function provision(): Promise<Workspace> {
  const init = await runCli(['admin', 'init', '--db', db, '--log-key', logKey, '--json'], {});
  expect(init.exitCode, init.stderr).toBe(0);
  const identity = JSON.parse(init.stdout) as { workspace_id: string; api_key: string };
  return { id: identity.workspace_id, apiKey: identity.api_key, acked: new Map(), checkpoints: [], read: new Set() };
}

async function launch(extra: string[] = []): Promise<Replica> {
  const replica = await startReplica(db, logKey, extra);
  everyReplica.push(replica);
  return replica;
}

beforeAll(async () => {
  cluster = await startCluster();
  db = await cluster.createDatabase('replicas');
  // `admin init` makes the log key file; every replica is given the same one
  workspaces.push(await provision());
  for (let i = 0; i < 3; i++) workspaces.push(await provision());
  replicas.push(...(await Promise.all([launch(), launch(), launch()])));
}, 120_000);

afterAll(async () => {
  await Promise.all(everyReplica.map((replica) => replica.kill()));
  await cluster?.stop();
});

/** A request of workspace `ws` to `replica`, through the tests' one request helper. */
function request(replica: Replica, ws: Pick<Workspace, 'id' | 'apiKey'>, method: string, rest: string, body?: unknown): Promise<Reply> {
  return call({ url: replica.url, apiKey: ws.apiKey }, method, wsPath(ws.id, rest), body === undefined ? {} : { body });
}

/** One write of kind `n % 3` (evidence, single attestation, a batch of 4): the ids and leaf indexes it was given. */
async function write(replica: Replica, ws: Workspace, n: number): Promise<{ ok: boolean; acked: [string, number][] }> {
  const kind = n % 3;
  if (kind === 0) {
    const reply = await request(replica, ws, 'POST', 'grc/evidence', evidenceRecord('change_event', { system_name: `system-${n % 5}` }));
    return reply.status === 201 ? { ok: true, acked: [[reply.json.record_id, reply.json.ledger_index]] } : { ok: false, acked: [] };
  }
  if (kind === 1) {
    const reply = await request(replica, ws, 'POST', 'attestations/external', attestation({ tool_name: `tool-${n}` }));
    return reply.status === 201 ? { ok: true, acked: [[reply.json.attestation_id, reply.json.ledger_index]] } : { ok: false, acked: [] };
  }
  const reply = await request(replica, ws, 'POST', 'attestations/batch', {
    records: Array.from({ length: 4 }, (_, i) => attestation({ tool_name: `batch-${n}-${i}` })),
  });
  if (reply.status < 200 || reply.status >= 300) return { ok: false, acked: [] };
  const results = reply.json.results as { status: string; attestation_id: string; ledger_index: number }[];
  return { ok: true, acked: results.filter((r) => r.status === 'accepted').map((r) => [r.attestation_id, r.ledger_index]) };
}

interface Load {
  /** requests in flight per replica url */
  inFlight: Map<string, number>;
  failures: number;
  ackedTotal(): number;
  /**
   * Resolves once `holds()` is true, checked whenever a write starts or ends (no polling), or
   * rejects after `timeoutMs` or when every writer has ended without it.
   */
  until(what: string, holds: () => boolean, timeoutMs?: number): Promise<void>;
  stop(): void;
  done: Promise<void>;
}

/**
 * Writers: `lanes` per workspace, each sending writes one after another to the replicas in turn,
 * at most `perLane` each. A lane drops a replica that does not answer (a dead process) and ends at
 * its first error answer (the database gone) or when stopped.
 */
function startLoad(targets: Replica[], { lanes = 2, perLane = 400 } = {}): Load {
  const inFlight = new Map(targets.map((r) => [r.url, 0]));
  let stopped = false;
  let failures = 0;
  let acked = 0;
  let ended = false;
  const waiters = new Set<() => void>();
  const changed = () => {
    for (const waiter of [...waiters]) waiter();
  };
  const lane = async (ws: Workspace, l: number) => {
    const mine = [...targets];
    for (let n = 0; n < perLane && !stopped && mine.length > 0; n++) {
      const replica = mine[(n + l) % mine.length];
      inFlight.set(replica.url, inFlight.get(replica.url)! + 1);
      changed();
      try {
        const result = await write(replica, ws, n * 16 + l);
        for (const [id, index] of result.acked) ws.acked.set(id, index);
        acked += result.acked.length;
        if (!result.ok) {
          failures += 1;
          return;
        }
      } catch {
        // no answer: the replica died (or died mid-request); nothing was acknowledged
        failures += 1;
        mine.splice(mine.indexOf(replica), 1);
      } finally {
        inFlight.set(replica.url, inFlight.get(replica.url)! - 1);
        changed();
      }
    }
  };
  const done = Promise.all(workspaces.flatMap((ws) => Array.from({ length: lanes }, (_, l) => lane(ws, l)))).then(() => {
    ended = true;
    changed();
  });
  const until = (what: string, holds: () => boolean, timeoutMs = 60_000) =>
    new Promise<void>((resolve, reject) => {
      const settle = (error?: Error) => {
        clearTimeout(timer);
        waiters.delete(check);
        if (error) reject(error);
        else resolve();
      };
      const check = () => {
        if (holds()) settle();
        else if (ended) settle(new Error(`the writers ended before ${what}`));
      };
      const timer = setTimeout(() => settle(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
      waiters.add(check);
      check();
    });
  return {
    inFlight,
    get failures() {
      return failures;
    },
    ackedTotal: () => acked,
    until,
    stop: () => (stopped = true),
    done,
  };
}

/** Polls `probe` (bounded) until it returns a value that is not undefined. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Resolves once `load` has acknowledged at least `count` records in total (bounded). */
function acknowledged(load: Load, count: number): Promise<void> {
  return load.until(`${count} acknowledged records`, () => load.ackedTotal() >= count);
}

/** The workspace's leaf count, read from PostgreSQL itself. */
async function leafCount(ws: Workspace): Promise<number> {
  return withClient(db, async (client) => {
    const { rows } = await client.query(
      'SELECT count(*)::int AS n, coalesce(max(leaf_index), -1)::int AS top, count(DISTINCT leaf_index)::int AS distinct_n FROM ledger_leaves l JOIN workspace_keys k USING (ws_key) WHERE k.workspace_id = $1',
      [ws.id],
    );
    const { n, top, distinct_n: distinct } = rows[0] as { n: number; top: number; distinct_n: number };
    // dense: indexes 0 … n-1, each once
    expect({ top, distinct }).toEqual({ top: n - 1, distinct: n });
    return n;
  });
}

const checkpointSize = (note: string) => Number(note.split('\n')[1]);

/** The workspace's checkpoint once it covers `size` leaves (bounded poll), from `replica`. */
async function checkpointCovering(replica: Replica, ws: Workspace, size: number, timeoutMs = 20_000): Promise<string> {
  const note = await until(
    `a checkpoint of ${size} leaves for ${ws.id} from ${replica.url}`,
    async () => {
      const reply = await request(replica, ws, 'GET', 'ledger/checkpoint');
      return reply.status === 200 && checkpointSize(reply.text) >= size ? reply.text : undefined;
    },
    timeoutMs,
  );
  ws.checkpoints.push(note);
  return note;
}

/** Every entry of the log up to `size`, read from the entry tiles a replica serves (uint16-length-prefixed). */
async function entriesOf(replica: Replica, ws: Workspace, size: number): Promise<string[]> {
  const entries: string[] = [];
  for (let tile = 0; tile * 256 < size; tile++) {
    const width = Math.min(256, size - tile * 256);
    expect(tile).toBeLessThan(1000); // paths of one 3-digit element are enough here
    const path = `ledger/tile/entries/${String(tile).padStart(3, '0')}${width < 256 ? `.p/${width}` : ''}`;
    const response = await fetch(replica.url + wsPath(ws.id, path), { headers: { authorization: `Bearer ${ws.apiKey}` } });
    expect(response.status, path).toBe(200);
    const bytes = Buffer.from(await response.arrayBuffer());
    for (let at = 0; at < bytes.length;) {
      const length = bytes.readUInt16BE(at);
      entries.push(bytes.subarray(at + 2, at + 2 + length).toString('utf8'));
      at += 2 + length;
    }
  }
  expect(entries.length).toBe(size);
  return entries;
}

interface ServiceCheck {
  notes: { key_id_ok: boolean; signature_ok: boolean; root_ok: boolean; size: number }[];
  inclusion_ok: boolean[];
  consistency_ok: boolean[];
  records_ok: Record<string, boolean>;
  tiles_ok: Record<string, boolean>;
}

const checkService = (request: Record<string, unknown>) =>
  runPythonJson<ServiceCheck>(fileURLToPath(new URL('../ledger_service_check.py', import.meta.url)), request);

/**
 * The log of `ws` checked from outside, through `reader` (a live replica): PostgreSQL's leaves are
 * dense; a checkpoint covers them all; the entries served in tiles hold every acknowledged id once,
 * at the leaf index its write was given, and no id twice; every acknowledged record is readable
 * (each one read by id once, and every one again with `rereadAll`, after PostgreSQL's own crash:
 * the death of a replica, which holds no rows, cannot lose what an earlier check read); and the
 * independent implementation verifies every checkpoint seen (signature, key id, root over the
 * entries), inclusion proofs of a sample, consistency proofs from each earlier checkpoint, a
 * level-0 tile, and that sampled records hash to their entries.
 */
async function verifyLog(reader: Replica, ws: Workspace, { rereadAll = false } = {}): Promise<number> {
  const size = await leafCount(ws);
  const note = await checkpointCovering(reader, ws, size);
  expect(checkpointSize(note)).toBe(size);
  const entries = await entriesOf(reader, ws, size);
  const ids = entries.map((entry) => (JSON.parse(entry) as { id: string }).id);
  expect(new Set(ids).size).toBe(ids.length);
  const misplaced = [...ws.acked].filter(([id, index]) => ids[index] !== id);
  expect(misplaced).toEqual([]);

  // every acknowledged record readable through this replica
  const acked = [...ws.acked.keys()].filter((id) => rereadAll || !ws.read.has(id));
  const unreadable: string[] = [];
  const bodies: Record<string, string> = {};
  for (let i = 0; i < acked.length; i += 16) {
    await Promise.all(
      acked.slice(i, i + 16).map(async (id) => {
        const reply = await request(reader, ws, 'GET', id.startsWith('rec_') ? `grc/evidence/${id}` : `attestations/${id}`);
        if (reply.status !== 200) unreadable.push(`${id}: ${reply.status}`);
        else {
          ws.read.add(id);
          if (Object.keys(bodies).length < 12) bodies[id] = reply.text;
        }
      }),
    );
  }
  expect(unreadable).toEqual([]);
  expect(Object.keys(bodies).length).toBeGreaterThan(0);

  const key = (await request(reader, ws, 'GET', 'ledger/key')).text.trim();
  const sample = [0, Math.floor(size / 3), Math.floor(size / 2), size - 1].map((index) => ids[index]);
  const inclusion = [];
  for (const id of sample) {
    const proof = await request(reader, ws, 'GET', `ledger/proof/inclusion?id=${id}&tree_size=${size}`);
    expect(proof.status).toBe(200);
    inclusion.push(proof.json);
  }
  const consistency = [];
  for (const earlier of new Set(ws.checkpoints.map(checkpointSize))) {
    if (earlier === 0 || earlier > size) continue;
    const proof = await request(reader, ws, 'GET', `ledger/proof/consistency?from=${earlier}&to=${size}`);
    expect(proof.status).toBe(200);
    consistency.push(proof.json);
  }
  const tilePath = `tile/0/000${size >= 256 ? '' : `.p/${size}`}`;
  const tileReply = await fetch(reader.url + wsPath(ws.id, `ledger/${tilePath}`), { headers: { authorization: `Bearer ${ws.apiKey}` } });
  const tiles = { [tilePath]: Buffer.from(await tileReply.arrayBuffer()).toString('base64') };

  // every checkpoint seen, in one run of the checker (the proofs, records and tile are checked
  // against the final log's entries, the same for every checkpoint)
  const notes = [...new Set(ws.checkpoints)].filter((checkpoint) => checkpointSize(checkpoint) <= size);
  const checked = await checkService({ vkey: key, notes, entries, records: bodies, inclusion, consistency, tiles });
  expect(checked.notes).toEqual(
    notes.map((note) => expect.objectContaining({ key_id_ok: true, signature_ok: true, root_ok: true, size: checkpointSize(note) })),
  );
  expect(checked.inclusion_ok).toEqual(inclusion.map(() => true));
  expect(checked.consistency_ok).toEqual(consistency.map(() => true));
  expect(Object.values(checked.records_ok)).toEqual(Object.keys(bodies).map(() => true));
  expect(checked.tiles_ok).toEqual({ [tilePath]: true });
  return size;
}

/** The replica holding the log's integration lease, by the pid in its holder name (`host:pid:random`). */
async function leaseHolder(candidates: Replica[]): Promise<Replica | undefined> {
  const holder = await withClient(db, async (client) => {
    const { rows } = await client.query("SELECT holder FROM leases WHERE name = 'ledger' AND expires_ms > $1", [Date.now()]);
    return (rows[0]?.holder as string | undefined) ?? null;
  });
  if (holder === null) return undefined;
  const pid = Number(holder.split(':')[1]);
  return candidates.find((replica) => replica.pid === pid);
}

describe('three govctl serve replicas on one PostgreSQL database', () => {
  it('spreads writes of several workspaces over the replicas into one dense, verifiable log per workspace', async () => {
    const load = startLoad(replicas, { lanes: 2, perLane: 15 });
    await load.done;
    expect(load.failures).toBe(0);
    for (const ws of workspaces) {
      // 30 writes a workspace (a third of them batches of 4), spread over the three replicas
      expect(ws.acked.size).toBe(10 + 10 + 10 * 4);
      await verifyLog(replicas[workspaces.indexOf(ws) % 3], ws);
    }
  }, 120_000);

  it("loses no acknowledged record when the replica holding the log's lease is SIGKILLed during writes; the others serve every one and take the lease over within seconds", async () => {
    const victim = await until('a lease holder among the replicas', () => leaseHolder(replicas), 10_000);
    const survivors = replicas.filter((replica) => replica !== victim);
    const before = workspaces.reduce((n, ws) => n + ws.acked.size, 0);
    const load = startLoad(replicas, { lanes: 2, perLane: 300 });
    await acknowledged(load, 60);
    // the kill lands while the victim has requests in flight
    await load.until('a request in flight at the victim', () => (load.inFlight.get(victim.url) ?? 0) > 0, 10_000);
    const killed = victim.kill();
    const atKill = load.ackedTotal();
    const sizesAtKill = new Map(workspaces.map((ws) => [ws, ws.acked.size]));
    await acknowledged(load, atKill + 60);
    load.stop();
    await Promise.all([load.done, killed]);
    expect(victim.exited()).toBe(true);
    expect(load.failures).toBeGreaterThan(0);
    replicas.splice(replicas.indexOf(victim), 1);
    expect(workspaces.reduce((n, ws) => n + ws.acked.size, 0)).toBeGreaterThan(before + 120);
    // A survivor integrates the leaves written after the kill, which only the lease's holder does:
    // it took the lease over (the lease lasts 3 s without renewal; the bound leaves room for a
    // loaded machine).
    const grown = workspaces.find((ws) => ws.acked.size > sizesAtKill.get(ws)!)!;
    expect(grown).toBeDefined();
    await checkpointCovering(survivors[1], grown, await leafCount(grown), 15_000);
    expect(await leaseHolder(survivors)).toBeDefined();
    for (const ws of workspaces) await verifyLog(survivors[workspaces.indexOf(ws) % 2], ws);
    // a replacement joins (and serves: the next test writes through every replica)
    replicas.push(await launch());
  }, 180_000);

  it('loses no acknowledged record when PostgreSQL is SIGKILLed during writes; replicas report unready, then recover on restart', async () => {
    expect(replicas.length).toBe(3);
    const load = startLoad(replicas, { lanes: 2, perLane: 300 });
    await acknowledged(load, 60);
    await cluster.kill('SIGKILL');
    // writers end at their first failed answer; none was acknowledged after the kill
    await load.done;
    expect(load.failures).toBeGreaterThan(0);
    for (const replica of replicas) {
      await until(`${replica.url} unready`, async () => ((await fetch(`${replica.url}/api/ready`)).status === 503 ? true : undefined), 10_000);
      // liveness is not readiness: the process is alive
      expect((await fetch(`${replica.url}/api/health`)).status).toBe(200);
    }
    const port = cluster.port;
    await cluster.start();
    // the same data directory and port: the replicas' URL still holds
    expect(cluster.port).toBe(port);
    for (const replica of replicas) {
      await until(`${replica.url} ready again`, async () => ((await fetch(`${replica.url}/api/ready`)).status === 200 ? true : undefined), 20_000);
    }
    // every replica takes writes again (a pooled connection broken by the crash may fail once)
    for (const replica of replicas) {
      for (const ws of workspaces) {
        const result = await until(`a write through ${replica.url}`, async () => {
          const outcome = await write(replica, ws, 2_000_000 + replicas.indexOf(replica));
          return outcome.ok ? outcome : undefined;
        });
        for (const [id, index] of result.acked) ws.acked.set(id, index);
      }
    }
    // after PostgreSQL's own crash every acknowledged record is read again, not only the new ones
    for (const ws of workspaces) await verifyLog(replicas[workspaces.indexOf(ws) % 3], ws, { rereadAll: true });
  }, 180_000);
});
