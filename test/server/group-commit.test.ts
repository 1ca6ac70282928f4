/**
 * The group-commit writer's fast path (no savepoints unless a write throws), its group hooks,
 * the store's per-group coverage and per-batch systems updates, and the pooled random ids.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IdGenerator, newId, newRequestId, uuidv7 } from '../../src/server/ids.js';
import { openDatabase, type Db } from '../../src/server/store/sqlite/database.js';
import type { AttestationRow, EvidenceRow } from '../../src/server/store/rows.js';
import { openStore } from '../../src/server/store/open-store.js';
import type { Store } from '../../src/server/store/store.js';
import { GroupCommitWriter, MAX_WAIT_MS } from '../../src/server/store/sqlite/writer.js';
import { sqliteOnly, storedRow, testStoreLocation } from '../helpers/backend.js';
import { startTestServer } from '../helpers/server.js';
import { call, countRows, evidenceRecord, storedAttestationRow, storedEvidenceRow, wsPath } from '../helpers/service-requests.js';
import { manualTimer } from '../helpers/manual-timer.js';

const open: (Db | Store)[] = [];
afterEach(async () => {
  for (const item of open.splice(0)) {
    if ('recordEvidence' in item) await item.close();
    else if (item.open) item.close();
  }
});

function table(): { db: Db; writer: GroupCommitWriter; calls: string[]; insert: (n: number) => unknown } {
  const db = openDatabase(':memory:');
  open.push(db);
  db.exec('CREATE TABLE t (n INTEGER UNIQUE)');
  const calls: string[] = [];
  const writer = new GroupCommitWriter(db, {
    begin: () => calls.push('begin'),
    end: () => {
      calls.push('end');
      db.prepare('INSERT INTO t (n) VALUES (-1) ON CONFLICT DO NOTHING').run();
    },
  });
  const statement = db.prepare('INSERT INTO t (n) VALUES (?)');
  return { db, writer, calls, insert: (n) => statement.run(n) };
}

// SQLite-only: SQLite's GroupCommitWriter on a raw connection. PostgreSQL's group commit:
// test/server/postgres/group-commit.test.ts.
describe.skipIf(sqliteOnly)('GroupCommitWriter fast path and group hooks', () => {
  it('runs each write once, between one begin and one end, when none throws', async () => {
    const { db, writer, calls, insert } = table();
    const runs = new Array(20).fill(0);
    await Promise.all(runs.map((_, i) => writer.write(() => (runs[i]++, insert(i)))));
    expect(runs).toEqual(new Array(20).fill(1));
    expect(calls).toEqual(['begin', 'end']);
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 21 });
  });

  it('when a write throws, runs the group again with savepoints: only that write is lost, end runs once', async () => {
    const { db, writer, calls, insert } = table();
    const outcomes = await Promise.allSettled([
      writer.write(() => insert(1)),
      writer.write(() => {
        insert(2);
        return insert(1); // UNIQUE violation after a statement that succeeded
      }),
      writer.write(() => insert(3)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(calls).toEqual(['begin', 'begin', 'end']);
    expect(db.prepare('SELECT n FROM t ORDER BY n').all()).toEqual([{ n: -1 }, { n: 1 }, { n: 3 }]);
  });

  it('a group whose end throws stores nothing and rejects every write in it', async () => {
    const db = openDatabase(':memory:');
    open.push(db);
    db.exec('CREATE TABLE t (n INTEGER)');
    const writer = new GroupCommitWriter(db, {
      begin: () => {},
      end: () => {
        throw new Error('end failed');
      },
    });
    const outcomes = await Promise.allSettled([writer.write(() => db.prepare('INSERT INTO t VALUES (1)').run()), writer.write(() => 2)]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 0 });
    await writer.close();
  });
});

/** A store of the test backend with one provisioned workspace. */
async function store(): Promise<{ store: Store; workspaceId: string; location: string }> {
  const location = await testStoreLocation('group-commit');
  const s = await openStore(location);
  open.push(s);
  return { store: s, workspaceId: (await s.identity.provision({}, Date.now())).workspace_id, location };
}

function evidenceRow(workspaceId: string, recordId: string, occurredMs: number, system = 'sys-a'): EvidenceRow {
  return storedEvidenceRow({ workspaceId, recordId, occurredMs, system });
}

describe('Store writes merged per group', () => {
  it('leaves the same coverage as one update per record, and a failed record earns nothing', async () => {
    const { store: s, workspaceId, location } = await store();
    const t = Date.UTC(2026, 0, 1);
    await s.recordEvidence({ row: evidenceRow(workspaceId, 'rec_0', t + 50_000), controls: ['C'] });
    const writes = [
      s.recordEvidence({ row: evidenceRow(workspaceId, 'rec_1', t + 1000), controls: ['A', 'B'] }),
      s.recordEvidence({ row: evidenceRow(workspaceId, 'rec_2', t + 3000), controls: ['B', 'C'] }),
      s.recordEvidence({ row: evidenceRow(workspaceId, 'rec_3', t + 2000), controls: ['A'] }),
      // same record_id as an earlier one: UNIQUE violation, rejected alone
      s.recordEvidence({ row: evidenceRow(workspaceId, 'rec_1', t + 90_000), controls: ['A', 'D'] }),
    ];
    const outcomes = await Promise.allSettled(writes);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    expect(Object.fromEntries(await s.lastEarned(workspaceId))).toEqual({ A: t + 2000, B: t + 3000, C: t + 50_000 });
    expect(await storedRow(location, 'SELECT count(*) AS n FROM evidence')).toEqual({ n: 4 });
  });

  it('updates each system of an attestation batch once, with its latest time', async () => {
    const { store: s, workspaceId, location } = await store();
    const t = Date.UTC(2026, 0, 1);
    const row = (i: number, system: string, executedMs: number): AttestationRow =>
      storedAttestationRow({
        attestation_id: newId('att'),
        workspace_id: workspaceId,
        system_name: system,
        agent_name: system,
        executed_ms: executedMs,
        record: `{"i":${i}}`,
        received_ms: t + 10_000,
      });
    await s.recordAttestations([row(0, 'x', t + 1000), row(1, 'y', t + 500), row(2, 'x', t + 3000), row(3, 'x', t + 2000), row(4, 'y', t + 20_000)]);
    const systems = (await s.systems.list(workspaceId)).map((r) => ({ name: r.name, evidence: r.last_evidence_ms, attested: r.last_attested_ms }));
    // y's latest is in the future of its arrival: it counts from arrival (t + 10 000)
    expect(systems).toEqual([
      { name: 'x', evidence: t + 3000, attested: t + 3000 },
      { name: 'y', evidence: t + 10_000, attested: t + 10_000 },
    ]);
    expect(await storedRow(location, 'SELECT count(*) AS n FROM attestations')).toEqual({ n: 5 });
  });
});

describe('ids from the random pool', () => {
  it('request ids are req_ + 16 hex digits, and ids do not repeat across many pool refills', () => {
    const requestIds = new Set(Array.from({ length: 5000 }, () => newRequestId()));
    expect(requestIds.size).toBe(5000);
    for (const id of requestIds) expect(id).toMatch(/^req_[0-9a-f]{16}$/);
    const uuids = Array.from({ length: 5000 }, () => uuidv7());
    expect(new Set(uuids).size).toBe(5000);
    for (const id of uuids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...uuids].sort()).toEqual(uuids); // time-ordered, monotonic within the process
  });

  it('a generator started after ids hands out ids that sort after the latest of them, even when it is ahead of the clock', () => {
    const ahead = `rec_${new IdGenerator().uuidv7(Date.now() + 3_600_000)}`; // as if an earlier run's clock was an hour ahead
    const behind = `rec_${'0'.repeat(8)}-0000-7000-8000-000000000000`;
    // a non-UUID and an id behind the other change nothing
    const ids = new IdGenerator([behind, 'rec_not-a-uuid', ahead, undefined]);
    const next = [ids.newId('rec'), ids.newId('rec'), ids.newId('rec')];
    expect([ahead, ...next].sort()).toEqual([ahead, ...next]);
    // another generator (the process's, for unordered ids) is not moved by it
    expect(newId('rec') < ahead).toBe(true);
  });

  it('a store opened on a file with records hands out record ids after the last stored one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'govctl-ids-'));
    try {
      const path = await testStoreLocation('ids', dir);
      const first = await openStore(path);
      const workspaceId = (await first.identity.provision({}, Date.now())).workspace_id;
      const future = `rec_${new IdGenerator().uuidv7(Date.now() + 7_200_000)}`;
      await first.recordEvidence({ row: storedEvidenceRow({ workspaceId, recordId: future, occurredMs: Date.now() }), controls: [] });
      await first.close();
      const second = await openStore(path); // the store starts its ids after the last stored one
      open.push(second);
      expect(second.newId('rec') > future).toBe(true);
      expect(second.newId('att').slice(4) > future.slice(4)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Lets `n` turns of the event loop pass (a group commits on the turn after it is armed). */
async function turns(n = 3): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

// SQLite-only: SQLite's GroupCommitWriter (PostgreSQL's: test/server/postgres/group-commit.test.ts).
describe.skipIf(sqliteOnly)('GroupCommitWriter waits for a group to fill, never long', () => {
  // How long it waits is a performance property (bench/server.mjs), not asserted here. What must
  // hold: a write waits (at most MAX_WAIT_MS) for as many as the last groups held, commits when
  // they arrive without waiting further, and commits alone when the wait ends.
  function writerWithTimer() {
    const db = openDatabase(':memory:');
    open.push(db);
    db.exec('CREATE TABLE t (n INTEGER)');
    const time = manualTimer();
    const writer = new GroupCommitWriter(db, undefined, time.timer);
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const count = () => (db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n;
    return { writer, time, write: (n: number) => writer.write(() => insert.run(n)), count };
  }

  it('after a group of n, a lone write waits for company until MAX_WAIT_MS ends, then commits alone', async () => {
    const { time, write, count } = writerWithTimer();
    // The first write commits on the next turn: nothing to wait for yet.
    await Promise.all(Array.from({ length: 8 }, (_, i) => write(i)));
    expect(time.waiting()).toEqual([]);
    expect(count()).toBe(8);

    let committed = false;
    const lone = write(100).then(() => (committed = true));
    await turns();
    expect(committed).toBe(false);
    expect(time.waiting()).toEqual([MAX_WAIT_MS]);
    time.fire();
    await lone;
    expect(count()).toBe(9);
  });

  it('commits a group as soon as it holds as many writes as the last one, without waiting', async () => {
    const { time, write, count } = writerWithTimer();
    await Promise.all(Array.from({ length: 8 }, (_, i) => write(i)));
    const burst = Array.from({ length: 8 }, (_, i) => write(200 + i));
    // The first of the burst started a wait; the eighth filled the group and cancelled it.
    expect(time.waiting()).toEqual([]);
    await Promise.all(burst);
    expect(count()).toBe(16);
  });

  it('close() commits a waiting write at once', async () => {
    const { writer, time, write, count } = writerWithTimer();
    await Promise.all(Array.from({ length: 5 }, (_, i) => write(i)));
    const waiting = write(5);
    expect(time.waiting()).toEqual([MAX_WAIT_MS]);
    await writer.close();
    await expect(waiting).resolves.toBeDefined();
    expect(count()).toBe(6);
    expect(time.waiting()).toEqual([]);
  });
});

describe('a client that half-closes after its request', () => {
  it('gets its reply even when its write waits for a group', async () => {
    const server = await startTestServer();
    try {
      const path = wsPath(server.workspaceId, 'grc/evidence');
      // a burst of concurrent writes makes the writer expect groups of that size
      const burst = await Promise.all(Array.from({ length: 10 }, () => call(server, 'POST', path, { body: evidenceRecord() })));
      expect(burst.map((r) => r.status)).toEqual(new Array(10).fill(201));
      const port = Number(new URL(server.url).port);
      const body = Buffer.from(JSON.stringify(evidenceRecord()), 'utf8');
      const text = await new Promise<string>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port });
        const chunks: Buffer[] = [];
        socket.on('data', (chunk) => chunks.push(chunk));
        socket.on('error', reject);
        socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
        const head = [
          `POST ${path} HTTP/1.1`,
          'Host: 127.0.0.1',
          `Authorization: Bearer ${server.apiKey}`,
          'Content-Type: application/json',
          `Content-Length: ${body.length}`,
        ];
        socket.end(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), body])); // request, then FIN
      });
      expect(text).toMatch(/^HTTP\/1\.1 201 /);
      expect(text).toContain('"detail":"ok"');
      expect(countRows(server.dbPath, 'evidence', server.workspaceId)).toBe(11);
    } finally {
      await server.stop();
    }
  });
});
