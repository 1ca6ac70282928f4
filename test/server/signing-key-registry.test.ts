/**
 * Each workspace's registry of verifying keys and its key policy (docs/security.md): `open` (the
 * default) lets any valid signature earn `witnessed`; under `registered` only a registered,
 * unrevoked key signing the canonical form does, and any other valid signature is stored as
 * `declared` with the reason in `detail`. Managed with the admin functions on the live database
 * file or PostgreSQL database, as `govctl admin signing-key` does beside a running service, and with the CLI in-process.
 */
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SigningKey, signWitness } from '../../src/core/index.js';
import { main } from '../../src/cli/main.js';
import { createMemoryIO } from '../../src/cli/io.js';
import { addSigningKey, listSigningKeys, revokeSigningKey, setSigningKeyPolicy } from '../../src/server/index.js';
import { storedRow } from '../helpers/backend.js';
import { provisionWorkspace, startTestServer, type TestServer } from '../helpers/server.js';
import { attestation, call, wsPath } from '../helpers/service-requests.js';

let server: TestServer;
let externalPath: string;
let batchPath: string;
const registered = SigningKey.fromHex('71'.repeat(32));
const stranger = SigningKey.fromHex('72'.repeat(32));
const retired = SigningKey.fromHex('73'.repeat(32));
let counter = 0;

beforeAll(async () => {
  server = await startTestServer();
  externalPath = wsPath(server.workspaceId, 'attestations/external');
  batchPath = wsPath(server.workspaceId, 'attestations/batch');
});
afterAll(async () => {
  await server.stop();
});

function signedBy(key: SigningKey, workspaceId = server.workspaceId): Record<string, unknown> {
  counter += 1;
  const record = attestation({ input_hash: counter.toString(16).padStart(64, '0') });
  return { ...record, ...signWitness(record, workspaceId, key) };
}

/** An independent fingerprint: SHA-256 of the raw 32 key bytes, hex. */
const fingerprintOf = (key: SigningKey) => createHash('sha256').update(Buffer.from(key.publicKeyHex, 'hex')).digest('hex');

async function stored(attestationId: string): Promise<Record<string, unknown>> {
  return (await storedRow(server.dbPath, 'SELECT trust_tier, tier_reason, key_fingerprint, witness_form FROM attestations WHERE attestation_id = ?', [
    attestationId,
  ]))!;
}

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = createMemoryIO();
  const code = await main(args, { io, env: { HOME: '/nonexistent' }, cwd: process.cwd() });
  return { code, stdout: io.stdoutText(), stderr: io.stderrText() };
}

describe('key policy open (the default)', () => {
  it('gives any valid signature witnessed, and keeps the key fingerprint', async () => {
    expect((await listSigningKeys(server.dbPath, { workspaceId: server.workspaceId })).policy).toBe('open');
    const reply = await call(server, 'POST', externalPath, { body: signedBy(stranger) });
    expect(reply.status).toBe(201);
    expect(reply.json).toMatchObject({ trust_tier: 'witnessed', external_verified: true, detail: 'ok' });
    expect(await stored(reply.json.attestation_id)).toMatchObject({ trust_tier: 'witnessed', tier_reason: null, key_fingerprint: fingerprintOf(stranger) });
  });
});

describe('key policy registered', () => {
  beforeAll(async () => {
    await addSigningKey(server.dbPath, { workspaceId: server.workspaceId, publicKeyHex: registered.publicKeyHex, name: 'ci' });
    await addSigningKey(server.dbPath, { workspaceId: server.workspaceId, publicKeyHex: retired.publicKeyHex.toUpperCase() });
    await revokeSigningKey(server.dbPath, { workspaceId: server.workspaceId, publicKeyHex: retired.publicKeyHex });
    await setSigningKeyPolicy(server.dbPath, { workspaceId: server.workspaceId, policy: 'registered' });
  });

  it('gives a registered key witnessed', async () => {
    const reply = await call(server, 'POST', externalPath, { body: signedBy(registered) });
    expect(reply.json).toMatchObject({ trust_tier: 'witnessed', external_verified: true, detail: 'ok' });
    expect(await stored(reply.json.attestation_id)).toMatchObject({ trust_tier: 'witnessed', key_fingerprint: fingerprintOf(registered) });
  });

  it('stores a valid signature by an unregistered key as declared, the reason in detail', async () => {
    const reply = await call(server, 'POST', externalPath, { body: signedBy(stranger) });
    expect(reply.status).toBe(201);
    expect(reply.json).toMatchObject({ trust_tier: 'declared', external_verified: true });
    expect(reply.json.detail).toMatch(/not a registered key/);
    expect(await stored(reply.json.attestation_id)).toMatchObject({
      trust_tier: 'declared',
      tier_reason: 'unregistered_key',
      witness_form: 'canonical',
      key_fingerprint: fingerprintOf(stranger),
    });
  });

  it('stores a valid signature by a revoked key as declared', async () => {
    const reply = await call(server, 'POST', externalPath, { body: signedBy(retired) });
    expect(reply.json).toMatchObject({ trust_tier: 'declared', external_verified: true });
    expect(reply.json.detail).toMatch(/revoked/);
    expect((await stored(reply.json.attestation_id)).tier_reason).toBe('revoked_key');
  });

  it('stores a legacy-form signature by a registered key as declared: it binds neither workspace nor system', async () => {
    const record = attestation({ input_hash: 'f'.repeat(64) });
    const legacy = {
      ...record,
      witness_sig: registered.ed25519SignHex(`${String(record.input_hash)}:${String(record.output_hash)}:${String(record.executed_at)}`),
      verifying_key_hex: registered.publicKeyHex,
    };
    const reply = await call(server, 'POST', externalPath, { body: legacy });
    expect(reply.json).toMatchObject({ trust_tier: 'declared', external_verified: true });
    expect(reply.json.detail).toMatch(/legacy form/);
    expect(await stored(reply.json.attestation_id)).toMatchObject({ tier_reason: 'legacy_form', witness_form: 'legacy' });
  });

  it('judges each batch item by its key, with the reason on the declared ones', async () => {
    const reply = await call(server, 'POST', batchPath, { body: { records: [signedBy(registered), signedBy(stranger), signedBy(retired), attestation()] } });
    expect(reply.json.accepted).toBe(4);
    const results = reply.json.results;
    expect(results.map((r: { trust_tier: string }) => r.trust_tier)).toEqual(['witnessed', 'declared', 'declared', 'declared']);
    expect(results[0].detail).toBeUndefined();
    expect(results[1].detail).toMatch(/not a registered key/);
    expect(results[2].detail).toMatch(/revoked/);
    expect(results[3].detail).toBeUndefined();
  });

  it('applies a revocation from the next request on, and a key registered in one workspace is not registered in another', async () => {
    const other = await provisionWorkspace(server.dbPath);
    await setSigningKeyPolicy(server.dbPath, { workspaceId: other.workspaceId, policy: 'registered' });
    const there = await call({ url: server.url, apiKey: other.apiKey }, 'POST', wsPath(other.workspaceId, 'attestations/external'), {
      body: signedBy(registered, other.workspaceId),
    });
    expect(there.json).toMatchObject({ trust_tier: 'declared' });

    const late = SigningKey.fromHex('74'.repeat(32));
    await addSigningKey(server.dbPath, { workspaceId: server.workspaceId, publicKeyHex: late.publicKeyHex });
    expect((await call(server, 'POST', externalPath, { body: signedBy(late) })).json.trust_tier).toBe('witnessed');
    await revokeSigningKey(server.dbPath, { workspaceId: server.workspaceId, publicKeyHex: late.publicKeyHex });
    expect((await call(server, 'POST', externalPath, { body: signedBy(late) })).json.trust_tier).toBe('declared');
  });
});

describe('a new key policy', () => {
  const postIn = async (other: { workspaceId: string; apiKey: string }) =>
    (
      await call({ url: server.url, apiKey: other.apiKey }, 'POST', wsPath(other.workspaceId, 'attestations/external'), {
        body: signedBy(stranger, other.workspaceId),
      })
    ).json;

  it('applies from the next request on, set from another connection (govctl admin beside the service) or through the serving store', async () => {
    const other = await provisionWorkspace(server.dbPath);
    expect(await postIn(other)).toMatchObject({ trust_tier: 'witnessed' });
    await setSigningKeyPolicy(server.dbPath, { workspaceId: other.workspaceId, policy: 'registered' });
    expect(await postIn(other)).toMatchObject({ trust_tier: 'declared', detail: expect.stringMatching(/not a registered key/) });
    await setSigningKeyPolicy(server.dbPath, { workspaceId: other.workspaceId, policy: 'open' });
    expect(await postIn(other)).toMatchObject({ trust_tier: 'witnessed' });
    const store = server.server.service.store;
    await store.signingKeys.setPolicy(other.workspaceId, 'registered', Date.now());
    expect(await postIn(other)).toMatchObject({ trust_tier: 'declared' });
    await store.signingKeys.setPolicy(other.workspaceId, 'open', Date.now());
    expect(await postIn(other)).toMatchObject({ trust_tier: 'witnessed' });
  });

  it('applies to a request whose body arrives after the change, though its key was checked before it', async () => {
    // The tier is judged under the policy in force when the record is received (its received_at),
    // not when the request's headers were: a client that holds its body back past a switch to
    // `registered` gets `declared` for an unregistered key.
    const other = await provisionWorkspace(server.dbPath);
    const store = server.server.service.store;
    const admit = store.admit;
    let admitted = (): void => undefined;
    const wasAdmitted = new Promise<void>((resolve) => (admitted = resolve));
    // Observed, not replaced: the moment the key has been checked.
    store.admit = async (query) => {
      const admission = await admit.call(store, query);
      admitted();
      return admission;
    };
    try {
      const body = JSON.stringify(signedBy(stranger, other.workspaceId));
      const head =
        `POST ${wsPath(other.workspaceId, 'attestations/external')} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${other.apiKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
      const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      const closed = new Promise((resolve) => socket.once('close', resolve));
      socket.write(head);
      await wasAdmitted;
      await setSigningKeyPolicy(server.dbPath, { workspaceId: other.workspaceId, policy: 'registered' });
      socket.end(body);
      await closed;
      const reply = Buffer.concat(chunks).toString('utf8');
      expect(reply).toMatch(/^HTTP\/1\.1 201 /);
      expect(reply).toContain('"trust_tier":"declared"');
    } finally {
      store.admit = admit;
    }
  });
});

describe('govctl admin signing-key', () => {
  it('adds, lists, revokes keys and sets the policy of a workspace', async () => {
    const ws = (await provisionWorkspace(server.dbPath)).workspaceId;
    const key = SigningKey.fromHex('75'.repeat(32));
    const add = await cli([
      'admin',
      'signing-key',
      'add',
      '--db',
      server.dbPath,
      '--workspace',
      ws,
      '--public-key',
      key.publicKeyHex,
      '--name',
      'runner',
      '--json',
    ]);
    expect(add.code, add.stderr).toBe(0);
    expect(JSON.parse(add.stdout)).toMatchObject({
      workspace_id: ws,
      fingerprint: fingerprintOf(key),
      public_key: key.publicKeyHex,
      name: 'runner',
      revoked_at: null,
    });

    const policy = await cli(['admin', 'signing-key', 'policy', 'registered', '--db', server.dbPath, '--workspace', ws, '--json']);
    expect(policy.code, policy.stderr).toBe(0);
    expect(JSON.parse(policy.stdout).policy).toBe('registered');

    const revoke = await cli(['admin', 'signing-key', 'revoke', '--db', server.dbPath, '--workspace', ws, '--public-key', key.publicKeyHex, '--json']);
    expect(revoke.code, revoke.stderr).toBe(0);
    expect(JSON.parse(revoke.stdout).revoked_at).toMatch(/^\d{4}-/);

    const list = await cli(['admin', 'signing-key', 'list', '--db', server.dbPath, '--workspace', ws]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain('policy\tregistered');
    expect(list.stdout).toContain(fingerprintOf(key));

    // a revoked key is never reinstated; an unknown key cannot be revoked; a bad key is a usage error
    const again = await cli(['admin', 'signing-key', 'add', '--db', server.dbPath, '--workspace', ws, '--public-key', key.publicKeyHex]);
    expect(again.code).toBe(64);
    expect(again.stderr).toMatch(/never reinstated/);
    const unknown = await cli(['admin', 'signing-key', 'revoke', '--db', server.dbPath, '--workspace', ws, '--public-key', 'ab'.repeat(32)]);
    expect(unknown.code).toBe(65);
    const bad = await cli(['admin', 'signing-key', 'add', '--db', server.dbPath, '--workspace', ws, '--public-key', 'xyz']);
    expect(bad.code).toBe(64);
    const badPolicy = await cli(['admin', 'signing-key', 'policy', 'closed', '--db', server.dbPath, '--workspace', ws]);
    expect(badPolicy.code).toBe(64);
  });
});
