/**
 * Stored attestations read back (GET attestations, GET attestations/{attestation_id}): the record
 * exactly as stored (its canonical text, numbers lossless) and the exact text its signature
 * covers, checked here by an independent implementation (python3 with `cryptography`: Ed25519
 * over signed_text, signed_text rebuilt from the record with Python's json, the fingerprint as
 * SHA-256 of the key bytes), never by the product's code.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonFloat, SigningKey, signWitness, stringifyJson } from '../../src/core/index.js';
import { createServiceApi } from '../../src/client/api.js';
import { storedRow } from '../helpers/backend.js';
import { python } from '../helpers/python.js';
import { provisionWorkspace, startTestServer, type TestServer } from '../helpers/server.js';
import { attestation, call, wsPath } from '../helpers/service-requests.js';

let server: TestServer;
const key = SigningKey.fromHex('61'.repeat(32));
const ids: Record<string, string> = {};

/** Posts a body as exact text (so that 85.0 and big integers reach the service as written). */
async function post(body: Record<string, unknown>): Promise<string> {
  const reply = await call(server, 'POST', wsPath(server.workspaceId, 'attestations/external'), { body: stringifyJson(body) });
  if (reply.status !== 201) throw new Error(`${reply.status} ${reply.text}`);
  return reply.json.attestation_id as string;
}

beforeAll(async () => {
  server = await startTestServer();
  const t = Date.parse('2026-03-01T00:00:00Z');
  const at = (i: number) => new Date(t + i * 60_000).toISOString();
  const lossless = attestation({ executed_at: at(0), tool_name: 'score', score: new JsonFloat(85), big: 12345678901234567890n, note: 'caf\u00e9 \u2713' });
  ids.canonical = await post({ ...lossless, ...signWitness(lossless, server.workspaceId, key) });
  const legacy = attestation({ executed_at: at(1), tool_name: 'legacy', input_hash: '1'.repeat(64) });
  ids.legacy = await post({
    ...legacy,
    witness_sig: key.ed25519SignHex(`${String(legacy.input_hash)}:${String(legacy.output_hash)}:${String(legacy.executed_at)}`),
    verifying_key_hex: key.publicKeyHex,
  });
  ids.unsigned = await post(attestation({ executed_at: at(2), system_name: 'other-system', tool_name: 'plain' }));
  for (let i = 0; i < 5; i += 1) {
    const record = attestation({
      executed_at: at(10 + i),
      system_name: 'paged',
      tool_name: `t${i % 2}`,
      input_hash: (i + 2).toString(16).repeat(64).slice(0, 64),
    });
    ids[`paged${i}`] = await post({ ...record, ...signWitness(record, server.workspaceId, key) });
  }
});
afterAll(async () => {
  await server.stop();
});

const PYTHON_CHECK = String.raw`
import hashlib, json, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.exceptions import InvalidSignature
workspace_id = sys.argv[1]
doc = json.load(sys.stdin)
out = []
for item in [i for i in doc.get("attestations", [doc]) if i["witness_sig"] is not None]:
    record = item["record"]
    if item["witness_form"] == "canonical":
        message = {k: v for k, v in record.items() if k not in ("witness_sig", "verifying_key_hex", "workspace_id")}
        message["workspace_id"] = workspace_id
        rebuilt = json.dumps(message, sort_keys=True, separators=(",", ":"))
    else:
        rebuilt = "%s:%s:%s" % (record["input_hash"], record["output_hash"], record["executed_at"])
    key = bytes.fromhex(item["verifying_key_hex"])
    try:
        Ed25519PublicKey.from_public_bytes(key).verify(bytes.fromhex(item["witness_sig"]), item["signed_text"].encode("utf-8"))
        verified = True
    except InvalidSignature:
        verified = False
    out.append({"id": item["attestation_id"], "verified": verified, "rebuilt": rebuilt == item["signed_text"],
                "fingerprint": hashlib.sha256(key).hexdigest() == item["key_fingerprint"]})
print(json.dumps(out))
`;

/** Checks the signed attestations of a reply body, given as the exact text the service sent. */
function pythonCheck(replyText: string): { id: string; verified: boolean; rebuilt: boolean; fingerprint: boolean }[] {
  return JSON.parse(execFileSync(python(), ['-c', PYTHON_CHECK, server.workspaceId], { input: replyText, encoding: 'utf8' }));
}

describe('GET attestations/{attestation_id}', () => {
  it('returns the record exactly as stored, and a signature python verifies over signed_text rebuilt from it', async () => {
    const reply = await call(server, 'GET', wsPath(server.workspaceId, `attestations/${ids.canonical}`));
    expect(reply.status).toBe(200);
    const storedText = (await storedRow<{ record: string }>(server.dbPath, 'SELECT record FROM attestations WHERE attestation_id = ?', [ids.canonical]))!
      .record;
    expect(reply.text).toContain(`"record":${storedText},`);
    expect(storedText).toContain('"score":85.0');
    expect(storedText).toContain('"big":12345678901234567890');
    expect(reply.json).toMatchObject({
      attestation_id: ids.canonical,
      witness_form: 'canonical',
      trust_tier: 'witnessed',
      verifying_key_hex: key.publicKeyHex,
      detail: 'ok',
    });
    // python parses 85.0 as a float and prints it back as 85.0: the rebuilt text matches byte for byte
    expect(pythonCheck(reply.text)).toEqual([{ id: ids.canonical, verified: true, rebuilt: true, fingerprint: true }]);
  });

  it('gives a legacy-form attestation its legacy signed_text, verified by python', async () => {
    const reply = await call(server, 'GET', wsPath(server.workspaceId, `attestations/${ids.legacy}`));
    expect(reply.json.witness_form).toBe('legacy');
    expect(reply.json.signed_text).toMatch(/^1{64}:b{64}:2026-03-01T00:01:00.000Z$/);
    expect(pythonCheck(reply.text)).toEqual([{ id: ids.legacy, verified: true, rebuilt: true, fingerprint: true }]);
  });

  it("shows an unsigned attestation with no signature, and 404 for an unknown id or another workspace's", async () => {
    const reply = await call(server, 'GET', wsPath(server.workspaceId, `attestations/${ids.unsigned}`));
    expect(reply.json).toMatchObject({
      signed_text: null,
      witness_sig: null,
      verifying_key_hex: null,
      witness_form: null,
      key_fingerprint: null,
      trust_tier: 'declared',
    });
    expect((await call(server, 'GET', wsPath(server.workspaceId, 'attestations/att_nope'))).status).toBe(404);
    const other = await provisionWorkspace(server.dbPath);
    const foreign = await call({ url: server.url, apiKey: other.apiKey }, 'GET', wsPath(other.workspaceId, `attestations/${ids.canonical}`));
    expect(foreign.status).toBe(404);
  });
});

describe('GET attestations', () => {
  it('lists newest first with filters, and every signed item verifies in python', async () => {
    const all = await call(server, 'GET', wsPath(server.workspaceId, 'attestations?since=2026-01-01T00:00:00Z'));
    expect(all.status).toBe(200);
    const listed = all.json.attestations as { attestation_id: string; witness_sig: string | null }[];
    expect(listed.map((a) => a.attestation_id)).toEqual([ids.paged4, ids.paged3, ids.paged2, ids.paged1, ids.paged0, ids.unsigned, ids.legacy, ids.canonical]);
    const checked = pythonCheck(all.text);
    expect(checked).toHaveLength(7);
    expect(checked.every((r) => r.verified && r.rebuilt && r.fingerprint)).toBe(true);

    const bySystem = await call(server, 'GET', wsPath(server.workspaceId, 'attestations?since=2026-01-01T00:00:00Z&system_name=paged&tool_name=t0'));
    expect(bySystem.json.attestations.map((a: { attestation_id: string }) => a.attestation_id)).toEqual([ids.paged4, ids.paged2, ids.paged0]);
    const window = await call(server, 'GET', wsPath(server.workspaceId, 'attestations?since=2026-03-01T00:01:00Z&until=2026-03-01T00:11:00Z'));
    expect(window.json.attestations.map((a: { attestation_id: string }) => a.attestation_id)).toEqual([ids.paged0, ids.unsigned, ids.legacy]);
  });

  it('pages with next_cursor, and refuses a bad limit, cursor or time', async () => {
    const api = createServiceApi({ baseUrl: server.url, apiKey: server.apiKey, workspaceId: server.workspaceId });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await api.listAttestations({ since: '2026-01-01T00:00:00Z', limit: 3, ...(cursor ? { cursor } : {}) });
      expect(page.attestations.length).toBeLessThanOrEqual(3);
      seen.push(...page.attestations.map((a) => a.attestation_id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(seen).toHaveLength(8);
    expect(new Set(seen).size).toBe(8);
    const one = await api.getAttestation(ids.canonical);
    expect(one.signed_text).toContain(`"workspace_id":"${server.workspaceId}"`);
    await api.close();

    for (const [query, field] of [
      ['limit=201', 'limit'],
      ['cursor=bm9wZQ', 'cursor'],
      ['since=yesterday', 'since'],
      ['since=2026-01-01T00:00:00Z&days=3', 'days'],
    ]) {
      const reply = await call(server, 'GET', wsPath(server.workspaceId, `attestations?${query}`));
      expect(reply.status, query).toBe(422);
      expect(reply.json.field).toBe(field);
    }
  });
});
