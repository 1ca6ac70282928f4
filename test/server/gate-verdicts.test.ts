/**
 * Signed gate verdicts (docs/ci.md, docs/service.md "Gate verdicts"), on the test backend: POST
 * grc/gates/check with subjects answers the gates and a DSSE envelope of an in-toto statement,
 * failures included; each verdict is stored and logged (leaf kind `verdict`), listed, and its key
 * published. The envelope is checked by an independent DSSE and in-toto reading written below from
 * the two specifications (DSSE protocol v1: PAE and the envelope; in-toto Statement v1 and its
 * DigestSet), sharing no code with the product.
 */
import { createHash, createPublicKey, generateKeyPairSync, sign as cryptoSign, verify as cryptoVerify } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type ServiceApp } from '../../src/server/app.js';
import { createVerdictKey, provision, readLedgerKey, createLedgerKey, readVerdictKey } from '../../src/server/index.js';
import { verifyVerdict, VerdictRejectedError } from '../../src/client/verify/verdict.js';
import { testStoreLocation } from '../helpers/backend.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Parsed JSON, read loosely as a test reads it. */
type Json = ReturnType<typeof JSON.parse>;

// ---- the independent reading, from the specifications -------------------------------------------

/** DSSE v1: PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, LEN in ASCII decimal. */
function specPae(type: string, body: Buffer): Buffer {
  const t = Buffer.from(type, 'utf8');
  return Buffer.concat([
    Buffer.from('DSSEv1', 'ascii'),
    Buffer.from(' '),
    Buffer.from(String(t.length)),
    Buffer.from(' '),
    t,
    Buffer.from(' '),
    Buffer.from(String(body.length)),
    Buffer.from(' '),
    body,
  ]);
}

/**
 * Verifies an envelope the way the DSSE protocol says (decode, verify the signature over PAE,
 * check the payload type, parse) and reads the in-toto statement: `_type`, subjects matched by
 * digest alone. Returns the statement, or the first step that fails.
 */
function specCheck(envelopeText: string, pem: string, artifactSha256: string): { ok: true; statement: Json } | { ok: false; step: string } {
  const envelope = JSON.parse(envelopeText);
  const body = Buffer.from(String(envelope.payload).replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  const key = createPublicKey(pem);
  const verified = (envelope.signatures as { sig: string }[]).some((s) =>
    cryptoVerify(null, specPae(envelope.payloadType, body), key, Buffer.from(s.sig, 'base64')),
  );
  if (!verified) return { ok: false, step: 'signature' };
  if (envelope.payloadType !== 'application/vnd.in-toto+json') return { ok: false, step: 'payloadType' };
  const statement = JSON.parse(body.toString('utf8'));
  if (statement._type !== 'https://in-toto.io/Statement/v1') return { ok: false, step: '_type' };
  if (!statement.subject.some((s: Json) => s.digest?.sha256 === artifactSha256)) return { ok: false, step: 'subject' };
  return { ok: true, statement };
}

// ---- the service ----------------------------------------------------------------------------------

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const IMAGE = sha('image bytes');
const OTHER = sha('another image');

const services: ServiceApp[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const service of services.splice(0)) await service.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function start(options: { verdictKey?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'govctl-verdicts-'));
  dirs.push(dir);
  const db = await testStoreLocation('verdicts', dir);
  const { api_key: apiKey, workspace_id: workspaceId } = await provision(db, { orgName: 'o', workspaceName: 'w' });
  createLedgerKey(join(dir, 'ledger-key'));
  createVerdictKey(join(dir, 'verdict-key'));
  const service = await createApp({
    db,
    ledger: { key: readLedgerKey(join(dir, 'ledger-key')), integration: 'manual' },
    ...(options.verdictKey === false ? {} : { verdictKey: readVerdictKey(join(dir, 'verdict-key')) }),
  });
  services.push(service);
  const send = async (method: 'GET' | 'POST', rest: string, body?: unknown) => {
    const reply = await service.app.inject({
      method,
      url: `/api/workspaces/${workspaceId}/governance/${rest}`,
      headers: { authorization: `Bearer ${apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
    return { status: reply.statusCode, text: reply.body, json: reply.body ? JSON.parse(reply.body) : undefined };
  };
  const setPolicy = async (rules: Record<string, { mode: 'required' | 'advisory'; threshold: number }>) => {
    for (const [framework, rule] of Object.entries(rules))
      await service.store.gatePolicy.change(workspaceId, { action: 'set', changedBy: 'test', framework: framework as never, rule }, Date.now());
  };
  // the gate policy's defaults, logged at provisioning (leaf 0), integrated on either backend
  await service.store.ledger.integrate();
  return { service, send, workspaceId, setPolicy };
}

const ALL_PASS = Object.fromEntries(
  ['eu_ai_act', 'iso_42001', 'soc2_type2', 'iso_27001', 'nist_airf'].map((f) => [f, { mode: 'advisory' as const, threshold: 0 }]),
);

describe('POST grc/gates/check with subjects', () => {
  it('answers the gates and a DSSE envelope of an in-toto statement that an independent reading verifies', async () => {
    const { send, setPolicy } = await start();
    await setPolicy(ALL_PASS);
    const pem = (await send('GET', 'gates/verdict-key')).json.pem as string;
    const reply = await send('POST', 'grc/gates/check', { subjects: [{ name: 'ghcr.io/acme/app', digest: { sha256: IMAGE } }], system: 'loan-scorer' });
    expect(reply.status).toBe(200);
    expect(reply.json.exit_code).toBe(0);
    expect(reply.json.gates).toHaveLength(5);
    expect(reply.json.verdict_id).toMatch(/^vrd_/);

    const envelopeText = JSON.stringify(reply.json.envelope);
    const checked = specCheck(envelopeText, pem, IMAGE);
    expect(checked.ok).toBe(true);
    const statement = (checked as { statement: Json }).statement;
    expect(statement.subject).toEqual([{ name: 'ghcr.io/acme/app', digest: { sha256: IMAGE } }]);
    expect(statement.predicateType).toBe('https://slsa.dev/verification_summary/v1');
    expect(statement.predicate.verificationResult).toBe('PASSED');
    expect(statement.predicate.govctlVerdict).toMatchObject({ verdict_id: reply.json.verdict_id, system: 'loan-scorer', exit_code: 0 });
    expect(statement.predicate.govctlVerdict.gates[0]).toMatchObject({ gate_id: 'gate_eu_ai_act', mode: 'advisory', threshold_pct: 0, passing: true });
    // the log's checkpoint at that moment: the one holding the gate policy's defaults (leaf 0); the
    // changes set since (leaves 1 to 5) and the verdict's own leaf were not integrated yet
    expect(reply.json.ledger_index).toBe(6);
    expect(statement.predicate.govctlVerdict.checkpoint).toMatchObject({ tree_size: 1 });
    // the product's verifier agrees
    expect(verifyVerdict(envelopeText, { key: pem, subjectSha256: IMAGE }).verdictId).toBe(reply.json.verdict_id);
    // and the independent reading rejects another artifact
    expect(specCheck(envelopeText, pem, OTHER)).toEqual({ ok: false, step: 'subject' });
  });

  it('signs a failing verdict too, which the verifier rejects as failing', async () => {
    const { send } = await start();
    const pem = (await send('GET', 'gates/verdict-key')).json.pem as string;
    const reply = await send('POST', 'grc/gates/check', { subjects: [{ name: 'app', digest: { sha256: IMAGE } }] });
    expect(reply.status).toBe(200);
    expect(reply.json.exit_code).toBe(2); // a new workspace: the EU AI Act gate blocks at 0 %
    const checked = specCheck(JSON.stringify(reply.json.envelope), pem, IMAGE);
    expect(checked.ok).toBe(true);
    expect((checked as { statement: Json }).statement.predicate).toMatchObject({ verificationResult: 'FAILED', verifiedLevels: ['FAILED'] });
    expect(() => verifyVerdict(JSON.stringify(reply.json.envelope), { key: pem, subjectSha256: IMAGE, allowSoftFail: true })).toThrow(
      expect.objectContaining({ reason: 'failing_verdict' }),
    );
  });

  it('logs every verdict: the leaf (kind verdict) commits to the stored verdict exactly as GET returns it', async () => {
    const { service, send, workspaceId } = await start();
    const first = await send('POST', 'grc/gates/check', { subjects: [{ name: 'a', digest: { sha256: IMAGE } }] });
    const second = await send('POST', 'grc/gates/check', { subjects: [{ name: 'b', digest: { sha256: OTHER } }] });
    expect([first.json.ledger_index, second.json.ledger_index]).toEqual([1, 2]); // leaf 0: the gate policy's defaults, logged at provisioning
    await service.store.ledger.integrate();
    const proof = await send('GET', `ledger/proof/inclusion?id=${second.json.verdict_id}`);
    expect(proof.status).toBe(200);
    const entry = JSON.parse(proof.json.entry);
    expect(entry).toMatchObject({ kind: 'verdict', id: second.json.verdict_id, workspace_id: workspaceId });
    const stored = await send('GET', `gates/verdicts/${second.json.verdict_id}`);
    expect(sha(stored.text)).toBe(entry.sha256);
    expect(stored.json).toMatchObject({ verdict_id: second.json.verdict_id, exit_code: 2, subjects: [{ name: 'b', digest: { sha256: OTHER } }] });
    expect(stored.json.envelope).toEqual(second.json.envelope);
    // the second verdict names the checkpoint signed before it: the gate policy's leaf only (the
    // verdicts were integrated after both)
    const payload = JSON.parse(Buffer.from(second.json.envelope.payload, 'base64').toString('utf8'));
    expect(payload.predicate.govctlVerdict.checkpoint.tree_size).toBe(1);

    const list = await send('GET', 'gates/verdicts?limit=1');
    expect(list.json.verdicts.map((v: { verdict_id: string }) => v.verdict_id)).toEqual([second.json.verdict_id]);
    const rest = await send('GET', `gates/verdicts?limit=1&before=${list.json.next_before}`);
    expect(rest.json.verdicts.map((v: { verdict_id: string }) => v.verdict_id)).toEqual([first.json.verdict_id]);
    expect((await send('GET', 'gates/verdicts/vrd_nope')).status).toBe(404);
  });

  it('leaves GET grc/gates/check as it was: no verdict, nothing logged', async () => {
    const { service, send } = await start();
    const reply = await send('GET', 'grc/gates/check');
    expect(Object.keys(reply.json).sort()).toEqual(['gates', 'passed', 'results']);
    expect(await service.store.ledger.integrate()).toBe(0);
  });

  it('refuses subjects that are not NAME and a sha256 digest, naming each', async () => {
    const { send } = await start();
    const reply = await send('POST', 'grc/gates/check', {
      subjects: [
        { name: 'a', digest: { sha256: 'ABC' } },
        { name: '', digest: { sha512: IMAGE } },
      ],
    });
    expect(reply.status).toBe(422);
    expect(reply.json.field).toBe('subjects[0].digest.sha256');
    expect(reply.json.message).toContain('subjects[1].name');
    expect((await send('POST', 'grc/gates/check', {})).status).toBe(422);
  });

  it('answers 503 without a verdict key, and signs nothing', async () => {
    const { service, send } = await start({ verdictKey: false });
    const reply = await send('POST', 'grc/gates/check', { subjects: [{ name: 'a', digest: { sha256: IMAGE } }] });
    expect(reply.status).toBe(503);
    expect(reply.json.error).toBe('service_unavailable');
    expect((await send('GET', 'gates/verdict-key')).status).toBe(503);
    expect(await service.store.ledger.integrate()).toBe(0);
  });
});

describe('the verifier (src/client/verify/verdict.ts) against envelopes built by the specifications', () => {
  // An envelope made here from the specifications with a key of the test's own: the product's
  // verifier must accept it, and name each way a changed one fails.
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
  const keyid = createHash('sha256')
    .update(publicKey.export({ format: 'der', type: 'spki' }).subarray(12))
    .digest('hex');
  const statement = (exitCode: number) => ({
    _type: 'https://in-toto.io/Statement/v1',
    subject: [{ name: 'app', digest: { sha256: IMAGE } }],
    predicateType: 'https://slsa.dev/verification_summary/v1',
    predicate: {
      verifier: { id: 'https://example.test/ledger/ws' },
      timeVerified: '2026-01-01T00:00:00.000Z',
      resourceUri: `app@sha256:${IMAGE}`,
      policy: { uri: 'https://example.test/ledger/ws/gate-policy', digest: { sha256: IMAGE } },
      verificationResult: exitCode === 0 ? 'PASSED' : 'FAILED',
      verifiedLevels: exitCode === 0 ? ['GOVCTL_GATES_PASSED'] : ['FAILED'],
      govctlVerdict: { verdict_id: 'vrd_x', workspace_id: 'ws_x', system: null, exit_code: exitCode, gates: [], posture: {}, checkpoint: null },
    },
  });
  const envelope = (body: Buffer, signer = privateKey) => ({
    payloadType: 'application/vnd.in-toto+json',
    payload: body.toString('base64'),
    signatures: [{ keyid, sig: cryptoSign(null, specPae('application/vnd.in-toto+json', body), signer).toString('base64') }],
  });
  const reason = (text: string, options: { allowSoftFail?: boolean; subject?: string; key?: string } = {}) => {
    try {
      verifyVerdict(text, { key: options.key ?? pem, subjectSha256: options.subject ?? IMAGE, allowSoftFail: options.allowSoftFail ?? false });
      return 'accepted';
    } catch (error) {
      return (error as VerdictRejectedError).reason;
    }
  };

  it('accepts a passing verdict, by PEM or hex key, standard or URL-safe base64', () => {
    const body = Buffer.from(JSON.stringify(statement(0)));
    const good = envelope(body);
    expect(reason(JSON.stringify(good))).toBe('accepted');
    const hex = publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('hex');
    expect(reason(JSON.stringify(good), { key: hex })).toBe('accepted');
    const urlSafe = {
      ...good,
      payload: body.toString('base64url'),
      signatures: [{ ...good.signatures[0], sig: Buffer.from(good.signatures[0].sig, 'base64').toString('base64url') }],
    };
    expect(reason(JSON.stringify(urlSafe))).toBe('accepted');
  });

  it('names each reason: another artifact, an altered payload, an unknown key, a failing verdict', () => {
    const body = Buffer.from(JSON.stringify(statement(0)));
    expect(reason(JSON.stringify(envelope(body)), { subject: OTHER })).toBe('other_subject');
    const altered = { ...envelope(body), payload: Buffer.from(JSON.stringify(statement(0)).replace('"app"', '"evil"')).toString('base64') };
    expect(reason(JSON.stringify(altered))).toBe('altered');
    const stranger = generateKeyPairSync('ed25519').privateKey;
    const foreign = envelope(body, stranger);
    foreign.signatures[0].keyid = 'someone-else';
    expect(reason(JSON.stringify(foreign))).toBe('unknown_key');
    const soft = JSON.stringify(envelope(Buffer.from(JSON.stringify(statement(1)))));
    expect(reason(soft)).toBe('failing_verdict');
    expect(reason(soft, { allowSoftFail: true })).toBe('accepted');
    expect(reason(JSON.stringify(envelope(Buffer.from(JSON.stringify(statement(2))))), { allowSoftFail: true })).toBe('failing_verdict');
    expect(reason('{"payload":')).toBe('malformed');
    const wrongType = { ...envelope(body), payloadType: 'application/json' };
    wrongType.signatures = [{ keyid, sig: cryptoSign(null, specPae('application/json', body), privateKey).toString('base64') }];
    expect(reason(JSON.stringify(wrongType))).toBe('malformed');
  });
});
