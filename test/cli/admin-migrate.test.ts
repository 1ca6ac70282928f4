/**
 * `govctl admin migrate --from FILE --to URL` against the run's throw-away PostgreSQL cluster: a
 * SQLite service database with records, attestations, keys, policies, a witness and its
 * cosignature, an idempotency key, and a log of a few hundred leaves in two workspaces (partly
 * integrated and signed, partly pending) is copied; each workspace's log root matches; a target
 * with data is refused and left as it was; then `govctl serve` (a process) on the PostgreSQL
 * database serves the same evidence list, the same verifier key and signed root, proofs that
 * verify, a log that goes on consistently, and the migrated API keys (a revoked one stays revoked).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CompactTree,
  CosignatureSigner,
  Ed25519NoteVerifier,
  leafHash,
  openCheckpoint,
  SigningKey,
  verifyConsistency,
  verifyInclusion,
} from '../../src/core/index.js';
import { openStore } from '../../src/server/store/open-store.js';
import {
  copySqliteToPostgres,
  addWitness,
  createApiKey,
  createLedgerKey,
  ledgerKeyPath,
  provision,
  readLedgerKey,
  revokeApiKey,
  setGatePolicy,
  gatePolicyChanges,
  addSigningKey,
  setSigningKeyPolicy,
  startServer,
} from '../../src/server/index.js';
import { BIN, cleanEnv, codeCacheEnv, ensureBuilt, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/cli-fixtures.js';
import { HAS_SCRIPT, runInPty, stripAnsi } from '../helpers/pty.js';
import { freshDatabase, withClient } from '../helpers/postgres.js';
import { attestation, call, evidenceRecord, wsPath } from '../helpers/service-requests.js';

beforeAll(ensureBuilt);

const temp = tempDir();
const db = join(temp.dir, 'server.db');
const PASSWORD = 'migrate-pw-0451';
const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  temp.remove();
});

interface Workspace {
  workspaceId: string;
  apiKey: string;
  ids: string[];
}

/** What the SQLite service served before the migration, to compare with PostgreSQL's. */
interface Before {
  evidence: { record_id: string }[];
  key: string;
  checkpoint: string;
  size: number;
}

const workspaces: Workspace[] = [];
const before: Record<string, Before> = {};
let revokedKey: string;
let target: string;
let idempotentId: string;
const idempotentBody = evidenceRecord('incident_report', { occurred_at: '2026-02-01T00:00:00.000Z' });
const witness = new CosignatureSigner('witness.example/w1', SigningKey.fromHex('44'.repeat(32)), () => 1_763_888_400);

/** Every record of the evidence list, newest first, page after page. */
async function listAll(as: { url: string; apiKey: string }, workspaceId: string): Promise<{ record_id: string }[]> {
  const records: { record_id: string }[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const reply = await call(as, 'GET', wsPath(workspaceId, `grc/evidence?since=2020-01-01T00:00:00Z&limit=200${cursor ? `&cursor=${cursor}` : ''}`));
    expect(reply.status, reply.text).toBe(200);
    records.push(...reply.json.records);
    cursor = reply.json.next_cursor ?? undefined;
    if (!cursor) break;
  }
  return records;
}

/** Writes to a workspace: evidence in batches and one at a time, attestations (single and batch). */
async function fill(server: { url: string }, ws: Workspace, evidence: number, attestations: number): Promise<void> {
  const as = { url: server.url, apiKey: ws.apiKey };
  const path = (rest: string) => wsPath(ws.workspaceId, rest);
  for (let i = 0; i < evidence; i += 50) {
    const records = Array.from({ length: Math.min(50, evidence - i) }, (_, j) =>
      evidenceRecord(j % 2 ? 'change_event' : 'model_evaluation', {
        system_name: `system-${(i + j) % 3}`,
        occurred_at: new Date(Date.UTC(2026, 0, 1) + (i + j) * 60_000).toISOString(),
      }),
    );
    const reply = await call(as, 'POST', path('grc/evidence/batch'), { body: { records } });
    expect(reply.status, reply.text).toBeLessThan(300);
    for (const result of reply.json.results) ws.ids.push(result.record_id);
  }
  for (let i = 0; i < attestations; i++) {
    const reply = await call(as, 'POST', path('attestations/external'), { body: attestation({ tool_name: `tool-${i}` }) });
    expect(reply.status, reply.text).toBe(201);
    ws.ids.push(reply.json.attestation_id);
  }
}

beforeAll(async () => {
  // ---- a SQLite service with two workspaces, keys and policies, a log partly integrated ----------
  for (const name of ['alpha', 'beta']) {
    const identity = await provision(db, { orgName: name, workspaceName: name });
    workspaces.push({ workspaceId: identity.workspace_id, apiKey: identity.api_key, ids: [] });
  }
  createLedgerKey(ledgerKeyPath(db));
  const [alpha, beta] = workspaces as [Workspace, Workspace];
  await createApiKey(db, { workspaceId: alpha.workspaceId, name: 'old' });
  await revokeApiKey(db, (await createApiKey(db, { workspaceId: alpha.workspaceId, name: 'gone' })).key_id);
  revokedKey = await (async () => {
    const made = await createApiKey(db, { workspaceId: beta.workspaceId, name: 'revoked' });
    await revokeApiKey(db, made.key_id);
    return made.api_key;
  })();
  await setGatePolicy(db, { workspaceId: alpha.workspaceId, framework: 'eu_ai_act', mode: 'required', threshold: 80 });
  // each workspace's log starts with its gate policy changes (its defaults; alpha's set)
  for (const ws of workspaces) ws.ids.push(...(await gatePolicyChanges(db, { workspaceId: ws.workspaceId })).map((change) => change.change_id));
  await addSigningKey(db, { workspaceId: beta.workspaceId, publicKeyHex: 'cd'.repeat(32), name: 'ci' });
  await setSigningKeyPolicy(db, { workspaceId: beta.workspaceId, policy: 'registered' });
  await addWitness(db, { workspaceId: alpha.workspaceId, key: witness.verifierKey });

  const server = await startServer({
    host: '127.0.0.1',
    port: 0,
    db,
    verifyWorkers: 0,
    ledger: { key: readLedgerKey(ledgerKeyPath(db)), integration: 'manual' },
  });
  try {
    await fill(server, alpha, 200, 15);
    await fill(server, beta, 120, 10);
    const idem = await call({ url: server.url, apiKey: alpha.apiKey }, 'POST', wsPath(alpha.workspaceId, 'grc/evidence'), {
      body: idempotentBody,
      headers: { 'idempotency-key': 'deploy-42' },
    });
    expect(idem.status).toBe(201);
    idempotentId = idem.json.record_id;
    alpha.ids.push(idempotentId);
    await server.service.store.ledger.integrate();
    // a witness cosigns alpha's checkpoint
    const note = (await call({ url: server.url, apiKey: alpha.apiKey }, 'GET', wsPath(alpha.workspaceId, 'ledger/checkpoint'))).text;
    const cosigned = await call({ url: server.url, apiKey: alpha.apiKey }, 'POST', wsPath(alpha.workspaceId, 'ledger/cosignatures'), {
      body: { checkpoint: note + witness.cosign(note.slice(0, note.indexOf('\n\n') + 1)) },
    });
    expect(cosigned.status, cosigned.text).toBeLessThan(300);
    for (const ws of workspaces) {
      const as = { url: server.url, apiKey: ws.apiKey };
      const checkpoint = (await call(as, 'GET', wsPath(ws.workspaceId, 'ledger/checkpoint'))).text;
      const key = (await call(as, 'GET', wsPath(ws.workspaceId, 'ledger/key'))).text.trim();
      before[ws.workspaceId] = {
        checkpoint,
        key,
        size: openCheckpoint(checkpoint, Ed25519NoteVerifier.fromVerifierKey(key)).checkpoint.size,
        evidence: await listAll(as, ws.workspaceId),
      };
    }
    // more leaves after the last checkpoint: pending when the copy is taken, integrated on PostgreSQL
    await fill(server, beta, 30, 5);
  } finally {
    await server.close();
  }
  const fresh = new URL(await freshDatabase('migrate'));
  fresh.username = 'postgres';
  fresh.password = PASSWORD;
  target = fresh.toString();
}, 120_000);

/** The log root of a workspace's leaves as stored in PostgreSQL, computed here from the entries. */
async function rootFromEntries(url: string, workspaceId: string): Promise<{ size: number; root: string }> {
  const rows = await withClient(url, (client) =>
    client.query<{ entry: Buffer }>(
      'SELECT l.entry FROM ledger_leaves l JOIN workspace_keys k USING (ws_key) WHERE k.workspace_id = $1 ORDER BY l.leaf_index',
      [workspaceId],
    ),
  );
  const tree = CompactTree.empty();
  for (const row of rows.rows) tree.append(leafHash(row.entry));
  return { size: tree.size, root: tree.root().toString('hex') };
}

describe('govctl admin migrate', () => {
  let report: {
    rows: Record<string, number>;
    workspaces: { workspace_id: string; source: { tree_size: number; root: string }; target: { tree_size: number; root: string }; same: boolean }[];
  };

  it("copies the SQLite database and prints each workspace's log root, the same on both sides", async () => {
    const result = await runCli(['admin', 'migrate', '--from', db, '--to', target, '--batch-size', '64', '--json'], {});
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout + result.stderr).not.toContain(PASSWORD);
    report = JSON.parse(result.stdout);
    expect(report.workspaces.map((w) => w.workspace_id)).toEqual(workspaces.map((w) => w.workspaceId));
    for (const [i, ws] of workspaces.entries()) {
      const line = report.workspaces[i];
      expect(line.same).toBe(true);
      expect(line.source.tree_size).toBe(ws.ids.length);
      expect(line.target).toEqual(line.source);
      // the root printed is the one the entries in PostgreSQL give
      expect(await rootFromEntries(target, ws.workspaceId)).toEqual({ size: line.source.tree_size, root: line.source.root });
    }
    expect(report.rows).toMatchObject({
      orgs: 2,
      workspaces: 2,
      evidence: 200 + 120 + 30 + 1,
      attestations: 15 + 10 + 5,
      ledger_leaves: 384,
      idempotency_keys: 1,
      ledger_witnesses: 1,
      ledger_cosignatures: 1,
      signing_keys: 1,
      gate_policy_changes: 3,
      witness_policy: 1,
    });
    expect(report.rows.api_keys).toBe(5);
  }, 60_000);

  it('prints one tab-separated line per workspace when piped', async () => {
    const again = await freshDatabase('migrate_piped');
    const result = await runCli(['admin', 'migrate', '--from', db, '--to', again], {});
    expect(result.exitCode, result.stderr).toBe(0);
    const lines = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split('\t'));
    expect(lines.map((fields) => [fields[0], fields[5]])).toEqual(workspaces.map((w) => [w.workspaceId, 'same']));
    expect(lines[0][2]).toBe(report.workspaces[0].source.root);
    // no progress when stderr is not a terminal: only the summary notes
    expect(result.stderr).not.toContain('migrating');
    expect(result.stderr).toMatch(/^govctl: copied \d+ rows/);
  }, 60_000);

  it.skipIf(!HAS_SCRIPT)(
    'shows progress on a terminal',
    async () => {
      const url = await freshDatabase('migrate_tty');
      const result = await runInPty(['admin', 'migrate', '--from', db, '--to', url, '--batch-size', '16'], { timeout: 60_000 });
      expect(result.exitCode, result.output).toBe(0);
      const plain = stripAnsi(result.output);
      expect(plain).toMatch(/migrating \d+ \| /);
      expect(result.output).toMatch(/\x1b\[\?25l/); // cursor hidden while drawing …
      expect(result.output).toMatch(/\x1b\[\?25h/); // … and shown again
      expect(plain).toContain('every log root matches');
    },
    60_000,
  );

  it('without --to or DATABASE_URL is 64 naming --to, the flag migrate has (not --db), and asks for the PostgreSQL target, not the database serve uses', async () => {
    const result = await runCli(['admin', 'migrate', '--from', db], { env: { DATABASE_URL: '' } });
    expect(result.exitCode).toBe(64);
    expect(result.stderr).toMatch(
      /^govctl: admin migrate needs --to URL \(or DATABASE_URL\); give the postgres:\/\/ URL of the empty PostgreSQL database to copy into$/m,
    );
    expect(result.stderr).not.toContain('SQLite file');
  });

  it('refuses a target that holds data (78), saying how to start over, and leaves it as it was', async () => {
    const count = () => withClient(target, async (client) => (await client.query<{ n: string }>('SELECT count(*) AS n FROM evidence')).rows[0].n);
    const rowsBefore = await count();
    const result = await runCli(['admin', 'migrate', '--from', db, '--to', target], {});
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toContain('holds data');
    expect(result.stderr).toContain('DROP SCHEMA public CASCADE');
    expect(result.stderr).not.toContain(PASSWORD);
    expect(await count()).toBe(rowsBefore);
  });

  it('is all or nothing: a copy that fails part-way leaves the target without data, and a new run succeeds', async () => {
    const url = await freshDatabase('migrate_interrupted');
    let batches = 0;
    const failing = copySqliteToPostgres(db, url, {
      batchSize: 50,
      onProgress: () => {
        if (++batches === 4) throw new Error('interrupted on purpose');
      },
    });
    await expect(failing).rejects.toThrow('interrupted on purpose');
    const counts = await withClient(
      url,
      async (client) =>
        (await client.query<{ n: number }>('SELECT (SELECT count(*) FROM orgs) + (SELECT count(*) FROM evidence) + (SELECT count(*) FROM ledger_leaves) AS n'))
          .rows[0].n,
    );
    expect(Number(counts)).toBe(0);
    const again = await runCli(['admin', 'migrate', '--from', db, '--to', url, '--json'], {});
    expect(again.exitCode, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).rows.evidence).toBe(report.rows.evidence);
  }, 60_000);

  it('exits 2 and marks the workspace DIFFERENT when a log root differs after the copy', async () => {
    const url = await freshDatabase('migrate_tampered');
    // the schema first, then a trigger that alters one leaf entry as it is written: a target that does not store what it is given
    await (await openStore(url)).close();
    await withClient(url, (client) =>
      client.query(`CREATE FUNCTION tamper() RETURNS trigger AS $$ BEGIN
          IF NEW.leaf_index = 7 THEN NEW.entry := NEW.entry || '\\x20'::bytea; END IF; RETURN NEW; END $$ LANGUAGE plpgsql;
        CREATE TRIGGER tamper BEFORE INSERT ON ledger_leaves FOR EACH ROW EXECUTE FUNCTION tamper();`),
    );
    const result = await runCli(['admin', 'migrate', '--from', db, '--to', url], {});
    expect(result.exitCode, result.stderr).toBe(2);
    expect(result.stdout.split('\n').filter((line) => line.endsWith('\tDIFFERENT'))).toHaveLength(2);
    expect(result.stderr).toContain('differs after the copy');
  }, 60_000);

  it('refuses a source a govctl serve is running on (78)', async () => {
    const server = await startServer({ host: '127.0.0.1', port: 0, db, verifyWorkers: 0 });
    try {
      const result = await runCli(['admin', 'migrate', '--from', db, '--to', await freshDatabase('migrate_busy')], {});
      expect(result.exitCode).toBe(78);
      expect(result.stderr).toContain('stop it before migrating');
    } finally {
      await server.close();
    }
  });

  it('then govctl serve on PostgreSQL serves the same records, key and signed root, proofs that verify, a log that goes on, and the migrated keys', async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--db', target, '--log-key', ledgerKeyPath(db), '--verify-workers', '0'], {
      env: cleanEnv(temp.dir, { NO_COLOR: '1', ...codeCacheEnv() }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL within 20 s; stderr: ${stderr}`)), 20_000);
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
    });
    try {
      // the start-up lines name the database without its password
      expect(stderr).toContain('(database postgres://postgres:***@127.0.0.1:');
      expect(stderr).toMatch(/"msg":"listening".*"db":"postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:/);
      expect(stderr).not.toContain(PASSWORD);

      for (const ws of workspaces) {
        const as = { url, apiKey: ws.apiKey };
        const path = (rest: string) => wsPath(ws.workspaceId, rest);
        const was = before[ws.workspaceId];
        // the migrated API key works; the evidence list is the one SQLite served (with the records written after it)
        const list = await listAll(as, ws.workspaceId);
        expect(was.evidence.length).toBeGreaterThan(100);
        const known = new Set(was.evidence.map((r) => r.record_id));
        expect(list.filter((r) => known.has(r.record_id))).toEqual(was.evidence);
        expect(list.length).toBe(ws.ids.filter((id) => id.startsWith('rec_')).length);
        // the same verifier key, and the checkpoint SQLite signed is still the one served until new leaves are integrated
        const key = (await call(as, 'GET', path('ledger/key'))).text.trim();
        expect(key).toBe(was.key);
        const verifier = Ed25519NoteVerifier.fromVerifierKey(key);
        const old = openCheckpoint(was.checkpoint, verifier).checkpoint;
        // wait (bounded) for the pending leaves to be integrated by this replica's timer
        let now = openCheckpoint((await call(as, 'GET', path('ledger/checkpoint'))).text, verifier).checkpoint;
        for (let i = 0; i < 100 && now.size < ws.ids.length; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          now = openCheckpoint((await call(as, 'GET', path('ledger/checkpoint'))).text, verifier).checkpoint;
        }
        expect(now.size).toBe(ws.ids.length);
        expect(Buffer.from(now.rootHash).toString('hex')).toBe(report.workspaces.find((w) => w.workspace_id === ws.workspaceId)!.source.root);
        if (now.size === old.size) expect(Buffer.from(now.rootHash)).toEqual(Buffer.from(old.rootHash));
        else {
          const consistency = await call(as, 'GET', path(`ledger/proof/consistency?from=${old.size}&to=${now.size}`));
          expect(
            verifyConsistency(
              old.size,
              now.size,
              consistency.json.hashes.map((h: string) => Buffer.from(h, 'base64')),
              old.rootHash,
              now.rootHash,
            ),
          ).toBe(true);
        }
        // inclusion proofs of the first, a middle and the last record verify against the signed root
        for (const id of [ws.ids[0], ws.ids[Math.floor(ws.ids.length / 2)], ws.ids[ws.ids.length - 1]]) {
          const proof = await call(as, 'GET', path(`ledger/proof/inclusion?id=${id}`));
          expect(proof.status, proof.text).toBe(200);
          expect(
            verifyInclusion(
              proof.json.leaf_index,
              proof.json.tree_size,
              leafHash(proof.json.entry),
              proof.json.hashes.map((h: string) => Buffer.from(h, 'base64')),
              now.rootHash,
            ),
          ).toBe(true);
        }
      }
      // the witness's cosignature came along
      const [alpha] = workspaces as [Workspace];
      const served = (await call({ url, apiKey: alpha.apiKey }, 'GET', wsPath(alpha.workspaceId, 'ledger/checkpoint'))).text;
      expect(served).toContain('— witness.example/w1 ');
      // a new write continues the log: its leaf index comes after the copied ones
      const next = await call({ url, apiKey: alpha.apiKey }, 'POST', wsPath(alpha.workspaceId, 'grc/evidence'), { body: evidenceRecord() });
      expect(next.status, next.text).toBe(201);
      expect(next.json.ledger_index).toBe(alpha.ids.length);
      // the idempotency key still stands for its record
      const replay = await call({ url, apiKey: alpha.apiKey }, 'POST', wsPath(alpha.workspaceId, 'grc/evidence'), {
        body: idempotentBody,
        headers: { 'idempotency-key': 'deploy-42' },
      });
      expect(replay.json).toMatchObject({ record_id: idempotentId, replayed: true });
      // the revoked key stays revoked
      expect((await call({ url, apiKey: revokedKey }, 'GET', '/api/me')).status).toBe(401);
      // new rows take identities after the copied ones: a new workspace, its records and attestations
      const init = await runCli(['admin', 'init', '--db', target, '--log-key', ledgerKeyPath(db), '--json'], {});
      expect(init.exitCode, init.stderr).toBe(0);
      const added = JSON.parse(init.stdout) as { workspace_id: string; api_key: string };
      const fresh = { url, apiKey: added.api_key };
      // after its first leaf, its default gate policy
      expect((await call(fresh, 'POST', wsPath(added.workspace_id, 'grc/evidence'), { body: evidenceRecord() })).json.ledger_index).toBe(1);
      expect((await call(fresh, 'POST', wsPath(added.workspace_id, 'attestations/external'), { body: attestation() })).json.ledger_index).toBe(2);
      expect(
        (await call({ url, apiKey: alpha.apiKey }, 'POST', wsPath(alpha.workspaceId, 'attestations/external'), { body: attestation() })).json.ledger_index,
      ).toBe(alpha.ids.length + 1);
    } finally {
      child.kill('SIGTERM');
    }
  }, 90_000);
});
