/**
 * `govctl attest list` and `govctl attest verify --remote` in-process against a real service: the
 * stored attestations verify (exit 0), pinned keys are checked independently of the service, and
 * an attestation whose stored text is altered in the SQLite file afterwards is named (exit 2).
 */
import { Database } from '../../src/server/store/sqlite/driver.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { createMemoryIO } from '../../src/cli/io.js';
import { SigningKey, signWitness } from '../../src/core/index.js';
import { cleanEnv, makeHome } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { attestation, call, wsPath } from '../helpers/service-requests.js';

let server: TestServer;
const key = SigningKey.fromHex('81'.repeat(32));
const otherKey = SigningKey.fromHex('82'.repeat(32));
const ids: string[] = [];

beforeAll(async () => {
  server = await startTestServer();
  const records = [
    attestation({ system_name: 'scorer', tool_name: 'classify', input_hash: '1'.repeat(64) }),
    attestation({ system_name: 'scorer', tool_name: 'summarise', input_hash: '2'.repeat(64) }),
    attestation({ system_name: 'chatbot', tool_name: 'search', input_hash: '3'.repeat(64) }),
  ];
  const signed = records.map((record) => ({ ...record, ...signWitness(record, server.workspaceId, key) }));
  const legacy = attestation({ system_name: 'chatbot', tool_name: 'old-client', input_hash: '4'.repeat(64) });
  signed.push({
    ...legacy,
    witness_sig: key.ed25519SignHex(`${String(legacy.input_hash)}:${String(legacy.output_hash)}:${String(legacy.executed_at)}`),
    verifying_key_hex: key.publicKeyHex,
  });
  for (const body of signed) {
    const reply = await call(server, 'POST', wsPath(server.workspaceId, 'attestations/external'), { body });
    if (reply.status !== 201) throw new Error(reply.text);
    ids.push(reply.json.attestation_id);
  }
});
afterAll(async () => {
  await server.stop();
});

async function govctl(args: string[], url = server.url): Promise<{ code: number; stdout: string; stderr: string }> {
  const home = makeHome();
  const io = createMemoryIO();
  const env = cleanEnv(home, { SERVICE_BASE_URL: url, SERVICE_API_KEY: server.apiKey, SERVICE_WORKSPACE_ID: server.workspaceId });
  const code = await main(args, { io, env, cwd: home });
  return { code, stdout: io.stdoutText(), stderr: io.stderrText() };
}

describe('govctl attest list', () => {
  it('lists the stored attestations newest first, with tier, form and fingerprint, and filters by system and tool', async () => {
    const json = await govctl(['attest', 'list', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const listed = JSON.parse(json.stdout).attestations;
    expect(listed.map((a: { attestation_id: string }) => a.attestation_id).sort()).toEqual([...ids].sort());
    expect(listed.every((a: { trust_tier: string; key_fingerprint: string }) => a.trust_tier === 'witnessed' && /^[0-9a-f]{64}$/.test(a.key_fingerprint))).toBe(
      true,
    );

    const piped = await govctl(['attest', 'list', '--system', 'scorer', '--tool', 'classify']);
    expect(piped.code, piped.stderr).toBe(0);
    const lines = piped.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    const [id, system, tool, , tier, form, fingerprint] = lines[0].split('\t');
    expect({ id, system, tool, tier, form }).toEqual({ id: ids[0], system: 'scorer', tool: 'classify', tier: 'witnessed', form: 'canonical' });
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);

    const all = await govctl(['attest', 'list', '--all', '--limit', '1', '--json']);
    expect(JSON.parse(all.stdout).attestations).toHaveLength(4);
  });
});

describe('govctl attest verify --remote', () => {
  it('exits 0 when every stored attestation verifies, also with the signing key pinned', async () => {
    const plain = await govctl(['attest', 'verify', '--remote', '--json']);
    expect(plain.code, plain.stderr).toBe(0);
    const report = JSON.parse(plain.stdout);
    expect(report).toMatchObject({ verified: 4, failed: 0 });
    expect(report.results.map((r: { form: string }) => r.form).sort()).toEqual(['canonical', 'canonical', 'canonical', 'legacy']);
    const pinned = await govctl(['attest', 'verify', '--remote', '--public-key', key.publicKeyHex]);
    expect(pinned.code, pinned.stderr).toBe(0);
  });

  it('exits 2 naming every attestation signed by a key not pinned', async () => {
    const result = await govctl(['attest', 'verify', '--remote', '--system', 'scorer', '--public-key', otherKey.publicKeyHex]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(ids[0]);
    expect(result.stderr).toContain(ids[1]);
    expect(result.stderr).not.toContain(ids[2]);
  });

  it('exits 2 naming a listing with a "__proto__" or duplicate member, and an attestation with an unknown one, read through a lying proxy on 127.0.0.1', async () => {
    const { createServer, request } = await import('node:http');
    let edit = (body: string) => body;
    const proxy = createServer((req, res) => {
      const upstream = request(new URL(req.url!, server.url), { method: req.method, headers: { ...req.headers, 'accept-encoding': 'identity' } }, (reply) => {
        const chunks: Buffer[] = [];
        reply.on('data', (chunk: Buffer) => chunks.push(chunk));
        reply.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const body = Buffer.from(req.url!.includes('/attestations?') ? edit(text) : text);
          const headers = { ...reply.headers, 'content-length': String(body.length) };
          delete headers['transfer-encoding'];
          res.writeHead(reply.statusCode!, headers);
          res.end(body);
        });
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
    try {
      // a member JSON readers disagree about spoils the whole list: named, exit 2
      const lies: [string, (body: string) => string][] = [
        ['a "__proto__" member', (body) => body.replace(`"attestation_id":"${ids[0]}"`, `"attestation_id":"${ids[0]}","__proto__":{"trust_tier":"witnessed"}`)],
        ['a duplicate member', (body) => body.replace(`"attestation_id":"${ids[0]}"`, `"attestation_id":"${ids[0]}","trust_tier":"witnessed"`)],
      ];
      for (const [what, lie] of lies) {
        edit = lie;
        const result = await govctl(['attest', 'verify', '--remote', '--json'], url);
        expect({ what, code: result.code }).toEqual({ what, code: 2 });
        expect(JSON.parse(result.stderr)).toMatchObject({
          error: 'ledger_check_failed',
          message: expect.stringMatching(/^the attestation list is not JSON the service writes: (A "__proto__" member|Duplicate member "trust_tier"): line 1/),
        });
      }
      // a member the service does not write fails that attestation
      edit = (body) => body.replace(`"attestation_id":"${ids[0]}"`, `"attestation_id":"${ids[0]}","approved_by":"mallory"`);
      const result = await govctl(['attest', 'verify', '--remote', '--json'], url);
      expect(result.code).toBe(2);
      const results = JSON.parse(result.stdout).results as { attestation_id?: string; status: string; reason?: string }[];
      expect(results.filter((r) => r.status !== 'valid')).toEqual([
        expect.objectContaining({
          attestation_id: ids[0],
          status: 'invalid',
          reason: 'not an attestation the service writes: it has an unknown member "approved_by"',
        }),
      ]);
    } finally {
      await new Promise<void>((done) => proxy.close(() => done()));
    }
  });

  it('exits 2 naming an attestation whose stored text was altered in the database file', async () => {
    const db = new Database(server.dbPath);
    try {
      const changed = db
        .prepare(`UPDATE attestations SET record = replace(record, '"tool_name":"summarise"', '"tool_name":"approve"') WHERE attestation_id = ?`)
        .run(ids[1]).changes;
      expect(changed).toBe(1);
    } finally {
      db.close();
    }
    const result = await govctl(['attest', 'verify', '--remote']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(ids[1]);
    expect(result.stderr).toMatch(/1 of 4 attestations does not verify/);
    for (const id of [ids[0], ids[2], ids[3]]) expect(result.stderr).not.toContain(id);
  });
});
