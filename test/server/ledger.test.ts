/**
 * The transparency log in a real service on 127.0.0.1 over a real database (of the test backend): leaf indexes in
 * write results, integration, the signed checkpoint, proofs and tiles — each checked with the
 * product's own verifier AND with the independent Python implementation (ledger_service_check.py,
 * built on test/core/ledger_reference.py).
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CosignatureSigner, Ed25519NoteVerifier, leafHash, openCheckpoint, SigningKey, verifyConsistency, verifyInclusion } from '../../src/core/index.js';
import { addWitness, createLedgerKey, provision, readLedgerKey, startServer, type RunningServer } from '../../src/server/index.js';
import { storedRows, testStoreLocation } from '../helpers/backend.js';
import { runPythonJson } from '../helpers/python.js';
import { attestation, call, evidenceRecord, wsPath } from '../helpers/service-requests.js';

function runServiceCheck<T>(request: Record<string, unknown>): Promise<T> {
  return runPythonJson<T>(fileURLToPath(new URL('./ledger_service_check.py', import.meta.url)), request);
}

interface Service {
  url: string;
  apiKey: string;
  workspaceId: string;
  dbPath: string;
  dir: string;
  /** the log key's file, in `dir` */
  keyFile: string;
  server: RunningServer;
}

/** A provisioned service with a log key, integrating only when the test says so. */
async function startLedgerService(integration: 'manual' | 'timer' = 'manual'): Promise<Service> {
  const dir = mkdtempSync(join(tmpdir(), 'govctl-ledger-'));
  const dbPath = await testStoreLocation('ledger', dir);
  const keyFile = join(dir, 'ledger-key');
  const identity = await provision(dbPath, { orgName: 'test', workspaceName: 'test' });
  createLedgerKey(keyFile);
  const server = await startServer({ host: '127.0.0.1', port: 0, db: dbPath, verifyWorkers: 0, ledger: { key: readLedgerKey(keyFile), integration } });
  // The workspace's first leaf, its default gate policy (logged when it was provisioned), integrated on every backend.
  await server.service.store.ledger.integrate();
  return { url: server.url, apiKey: identity.api_key, workspaceId: identity.workspace_id, dbPath, dir, keyFile, server };
}

const b64 = (hashes: string[]) => hashes.map((hash) => Buffer.from(hash, 'base64'));

describe('the transparency log endpoints', () => {
  let service: Service;
  const ids: string[] = [];
  const bodies: Record<string, string> = {};
  const witnessKey = SigningKey.fromHex('44'.repeat(32));

  beforeAll(async () => {
    service = await startLedgerService();
  });
  afterAll(async () => {
    await service.server.close();
    rmSync(service.dir, { recursive: true, force: true });
  });

  const path = (rest: string) => wsPath(service.workspaceId, rest);

  it('returns each write its leaf index, in the order the writes were acknowledged, after the default gate policy', async () => {
    const [defaults] = (await call(service, 'GET', path('grc/gates/policy'))).json.changes;
    expect(defaults).toMatchObject({ action: 'defaults', changed_by: 'govctl', framework: null });
    const first = await call(service, 'POST', path('grc/evidence'), { body: evidenceRecord('change_event', { identity: 'alice', environment: 'production' }) });
    expect(first.status).toBe(201);
    expect(first.json.ledger_index).toBe(1);
    const att = await call(service, 'POST', path('attestations/external'), { body: attestation() });
    expect(att.json.ledger_index).toBe(2);
    const batch = await call(service, 'POST', path('attestations/batch'), {
      body: { records: [attestation(), { bad: true }, attestation({ tool_name: 'fetch' })] },
    });
    expect(batch.json.results.map((r: { ledger_index?: number }) => r.ledger_index)).toEqual([3, undefined, 4]);
    const second = await call(service, 'POST', path('grc/evidence'), { body: evidenceRecord('change_event', { resource: 'github.com/acme/app' }) });
    expect(second.json.ledger_index).toBe(5);
    ids.push(
      defaults.change_id,
      first.json.record_id,
      att.json.attestation_id,
      batch.json.results[0].attestation_id,
      batch.json.results[2].attestation_id,
      second.json.record_id,
    );
  });

  it('answers 202 with Retry-After for a record not yet integrated, and 404 for an unknown id', async () => {
    const pending = await call(service, 'GET', path(`ledger/proof/inclusion?id=${ids[1]}`));
    expect(pending.status).toBe(202);
    expect(pending.headers.get('retry-after')).toBe('1');
    expect(pending.json).toMatchObject({ id: ids[1], leaf_index: 1, detail: 'not_integrated' });
    expect((await call(service, 'GET', path('ledger/proof/inclusion?id=rec_nope'))).status).toBe(404);
  });

  it('serves a checkpoint signed by the log key, proofs and tiles that the Python reference verifies', async () => {
    expect(await service.server.service.store.ledger.integrate()).toBe(5);
    const changes: { change_id: string }[] = (await call(service, 'GET', path('grc/gates/policy'))).json.changes;
    const key = (await call(service, 'GET', path('ledger/key'))).text.trim();
    expect(key.startsWith(`govctl.local/ledger/${service.workspaceId}+`)).toBe(true);
    const checkpoint = await call(service, 'GET', path('ledger/checkpoint'));
    expect(checkpoint.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const opened = openCheckpoint(checkpoint.text, Ed25519NoteVerifier.fromVerifierKey(key));
    expect(opened.checkpoint.size).toBe(6);

    const inclusion = [];
    for (const id of ids) {
      const proof = await call(service, 'GET', path(`ledger/proof/inclusion?id=${id}`));
      expect(proof.status).toBe(200);
      expect(verifyInclusion(proof.json.leaf_index, proof.json.tree_size, leafHash(proof.json.entry), b64(proof.json.hashes), opened.checkpoint.rootHash)).toBe(
        true,
      );
      inclusion.push(proof.json);
      const kind = JSON.parse(proof.json.entry).kind;
      if (kind === 'gate_policy') {
        // a policy change's body: the change as the policy endpoint lists it
        bodies[id] = JSON.stringify(changes.find((change) => change.change_id === id));
        continue;
      }
      const record = await call(service, 'GET', path(kind === 'evidence' ? `grc/evidence/${id}` : `attestations/${id}`));
      expect(record.status).toBe(200);
      bodies[id] = record.text;
    }
    const older = await call(service, 'GET', path(`ledger/proof/inclusion?id=${ids[1]}&tree_size=3`));
    inclusion.push(older.json);
    const consistency = [];
    for (const [from, to] of [
      [0, 5],
      [1, 5],
      [3, 5],
      [4, 5],
      [2, 3],
      [5, 6],
      [6, 6],
    ]) {
      const proof = await call(service, 'GET', path(`ledger/proof/consistency?from=${from}&to=${to}`));
      expect(proof.status).toBe(200);
      consistency.push(proof.json);
    }
    const tiles: Record<string, string> = {};
    for (const tile of ['tile/0/000.p/6', 'tile/entries/000.p/6', 'tile/0/000.p/3']) {
      const reply = await fetch(`${service.url}${path(`ledger/${tile}`)}`, { headers: { authorization: `Bearer ${service.apiKey}` } });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      tiles[tile] = Buffer.from(await reply.arrayBuffer()).toString('base64');
    }
    const entries = inclusion
      .slice(0, 6)
      .sort((a, b) => a.leaf_index - b.leaf_index)
      .map((p) => p.entry as string);
    const checked = await runServiceCheck<Record<string, any>>({ vkey: key, note: checkpoint.text, entries, records: bodies, inclusion, consistency, tiles });
    expect(checked).toMatchObject({ key_id_ok: true, signature_ok: true, root_ok: true, size: 6, origin: `govctl.local/ledger/${service.workspaceId}` });
    expect(checked.inclusion_ok).toEqual(inclusion.map(() => true));
    expect(checked.consistency_ok).toEqual(consistency.map(() => true));
    expect(Object.values(checked.records_ok)).toEqual(ids.map(() => true));
    expect(checked.tiles_ok).toEqual({ 'tile/0/000.p/6': true, 'tile/entries/000.p/6': true, 'tile/0/000.p/3': true });
  });

  it('404s tiles past the tree and refuses sizes beyond it', async () => {
    expect((await call(service, 'GET', path('ledger/tile/0/000.p/7'))).status).toBe(404);
    expect((await call(service, 'GET', path('ledger/tile/0/000'))).status).toBe(404);
    expect((await call(service, 'GET', path('ledger/tile/0/0'))).status).toBe(404);
    expect((await call(service, 'GET', path('ledger/proof/consistency?from=2&to=9'))).status).toBe(404);
    const backwards = await call(service, 'GET', path('ledger/proof/consistency?from=4&to=2'));
    expect(backwards.status).toBe(422);
    // the store's sentence as it is, its field named once (not "from from must …")
    expect(backwards.json).toEqual({ error: 'validation_error', message: 'from must not be larger than to', field: 'from' });
  });

  it('checks consistency proofs against the two signed roots', async () => {
    const key = Ed25519NoteVerifier.fromVerifierKey((await call(service, 'GET', path('ledger/key'))).text.trim());
    const before = openCheckpoint((await call(service, 'GET', path('ledger/checkpoint'))).text, key).checkpoint;
    await call(service, 'POST', path('grc/evidence'), { body: evidenceRecord() });
    await service.server.service.store.ledger.integrate();
    const after = openCheckpoint((await call(service, 'GET', path('ledger/checkpoint'))).text, key).checkpoint;
    expect(after.size).toBe(before.size + 1);
    const proof = await call(service, 'GET', path(`ledger/proof/consistency?from=${before.size}&to=${after.size}`));
    expect(verifyConsistency(before.size, after.size, b64(proof.json.hashes), before.rootHash, after.rootHash)).toBe(true);
  });

  it('accepts a registered witness cosignature and serves it with the checkpoint; refuses others', async () => {
    const witness = new CosignatureSigner('witness.example/w1', witnessKey, () => 1_763_888_400);
    const note = (await call(service, 'GET', path('ledger/checkpoint'))).text;
    const cosigned = note + witness.cosign(note.slice(0, note.indexOf('\n\n') + 1));
    const refused = await call(service, 'POST', path('ledger/cosignatures'), { body: { checkpoint: cosigned } });
    expect(refused.status).toBe(422);
    expect(refused.json).toEqual({
      error: 'validation_error',
      message: expect.stringMatching(/^the workspace has no registered witness/),
      field: 'checkpoint',
    });
    await addWitness(service.dbPath, { workspaceId: service.workspaceId, key: witness.verifierKey });
    const accepted = await call(service, 'POST', path('ledger/cosignatures'), { body: { checkpoint: cosigned } });
    expect(accepted.status).toBe(201);
    expect(accepted.json).toEqual({ accepted: ['witness.example/w1'] });
    const served = (await call(service, 'GET', path('ledger/checkpoint'))).text;
    const key = Ed25519NoteVerifier.fromVerifierKey((await call(service, 'GET', path('ledger/key'))).text.trim());
    expect(openCheckpoint(served, key, [witness.verifier]).cosignatures.map((c) => c.name)).toEqual(['witness.example/w1']);
    // A forged cosignature line (right name and key id, wrong signature) is refused.
    const forged = cosigned.replace(/(— witness\.example\/w1 \S{20})\S/, (_m, head: string) => head + (cosigned.includes(head + 'A') ? 'B' : 'A'));
    expect((await call(service, 'POST', path('ledger/cosignatures'), { body: { checkpoint: forged } })).status).toBe(422);
  });

  it('keeps the log key out of the database, in a file readable by its owner only', async () => {
    expect(statSync(service.keyFile).mode & 0o777).toBe(0o600);
    // the key's secret part: PRIVATE+KEY+<name>+<id>+<key>, the key in base64 (which may hold a +)
    const secret = /^PRIVATE\+KEY\+[^+]+\+[0-9a-f]{8}\+(\S+)$/.exec(readFileSync(service.keyFile, 'utf8').trim())?.[1];
    expect(secret).toMatch(/^[A-Za-z0-9+/]{40,}={0,2}$/);
    const notes = await storedRows<{ note: string }>(service.dbPath, 'SELECT note FROM ledger_checkpoints');
    expect(notes.length).toBeGreaterThan(0);
    for (const { note } of notes) {
      expect(note).not.toMatch(/PRIVATE/);
      expect(note).not.toContain(secret!);
    }
  });
});

describe('integration on a timer', () => {
  it('covers an acknowledged write with a signed checkpoint within one tick (250 ms, injected clock)', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const service = await startLedgerService('timer');
    try {
      const path = (rest: string) => wsPath(service.workspaceId, rest);
      const write = await call(service, 'POST', path('grc/evidence'), { body: evidenceRecord() });
      expect((await call(service, 'GET', path(`ledger/proof/inclusion?id=${write.json.record_id}`))).status).toBe(202);
      vi.advanceTimersByTime(250);
      // One tick, and no other: on SQLite its integration is done when the tick returns; on
      // PostgreSQL it is queries in flight (the lease, then the workspace), so the proof is asked
      // for until that one integration has committed (bounded; no further tick can fire).
      let proof = await call(service, 'GET', path(`ledger/proof/inclusion?id=${write.json.record_id}`));
      for (let attempt = 0; proof.status === 202 && attempt < 200; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        proof = await call(service, 'GET', path(`ledger/proof/inclusion?id=${write.json.record_id}`));
      }
      expect(proof.status).toBe(200);
      expect(proof.json.tree_size).toBe(2);
      const note = (await call(service, 'GET', path('ledger/checkpoint'))).text;
      expect(note.split('\n')[1]).toBe('2');
    } finally {
      vi.useRealTimers(); // the graceful close sweeps idle connections on a real interval
      await service.server.close();
      rmSync(service.dir, { recursive: true, force: true });
    }
  });
});

describe('the log key and origin', () => {
  it('without a key keeps the tree but signs nothing: checkpoint and key answer 503, writes still get their index', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'govctl-ledger-nokey-'));
    const dbPath = await testStoreLocation('ledger-nokey', dir);
    const identity = await provision(dbPath, {});
    const server = await startServer({ host: '127.0.0.1', port: 0, db: dbPath, verifyWorkers: 0, ledger: { integration: 'manual' } });
    try {
      const s = { url: server.url, apiKey: identity.api_key };
      const write = await call(s, 'POST', wsPath(identity.workspace_id, 'grc/evidence'), { body: evidenceRecord() });
      expect(write.json.ledger_index).toBe(1); // after the workspace's default gate policy
      await server.service.store.ledger.integrate();
      for (const path of ['ledger/checkpoint', 'ledger/key']) {
        const reply = await call(s, 'GET', wsPath(identity.workspace_id, path));
        expect(reply.status).toBe(503);
        // the error table's code for a service that cannot do this now, not a bug's server_error
        expect(reply.json.error).toBe('service_unavailable');
        expect(reply.headers.get('retry-after')).toBe('3600');
      }
      expect((await call(s, 'GET', wsPath(identity.workspace_id, `ledger/proof/inclusion?id=${write.json.record_id}`))).json.tree_size).toBe(2);
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names each workspace log <prefix>/<workspace_id> with the origin prefix given, one seed for every workspace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'govctl-ledger-origin-'));
    const dbPath = await testStoreLocation('ledger-origin', dir);
    const keyFile = join(dir, 'ledger-key');
    const one = await provision(dbPath, {});
    const two = await provision(dbPath, {});
    createLedgerKey(keyFile);
    const server = await startServer({
      host: '127.0.0.1',
      port: 0,
      db: dbPath,
      verifyWorkers: 0,
      ledger: { key: readLedgerKey(keyFile), originPrefix: 'audit.example.com/govctl', integration: 'manual' },
    });
    try {
      await server.service.store.ledger.integrate();
      const keyOf = async (id: { api_key: string; workspace_id: string }) =>
        (await call({ url: server.url, apiKey: id.api_key }, 'GET', wsPath(id.workspace_id, 'ledger/key'))).text.trim();
      const [k1, k2] = [await keyOf(one), await keyOf(two)];
      expect(k1.startsWith(`audit.example.com/govctl/${one.workspace_id}+`)).toBe(true);
      expect(k2.startsWith(`audit.example.com/govctl/${two.workspace_id}+`)).toBe(true);
      expect(k1.split('+')[2]).toBe(k2.split('+')[2]);
      const note = (await call({ url: server.url, apiKey: two.api_key }, 'GET', wsPath(two.workspace_id, 'ledger/checkpoint'))).text;
      expect(openCheckpoint(note, Ed25519NoteVerifier.fromVerifierKey(k2)).checkpoint).toMatchObject({
        origin: `audit.example.com/govctl/${two.workspace_id}`,
        size: 1, // the workspace's default gate policy
      });
      expect(() => openCheckpoint(note, Ed25519NoteVerifier.fromVerifierKey(k1))).toThrow();
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
