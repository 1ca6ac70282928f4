/**
 * Signed gate verdicts from the command line (docs/ci.md): `gates check --subject … --attest FILE`
 * on the embedded store and against a service, `gates verdict-key`, `gates verdicts`,
 * `ledger prove <verdict_id>`, and `gates verify-attestation` offline with a pinned key, which
 * exits 2 naming why it rejects an envelope. The envelope written is checked here by an
 * independent DSSE reading (PAE per the DSSE protocol, node:crypto's Ed25519), not the product's.
 */
import { createHash, createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createVerdictKey,
  provision,
  readLedgerKey,
  createLedgerKey,
  readVerdictKey,
  setGatePolicy,
  startServer,
  type RunningServer,
} from '../../src/server/index.js';
import { makeHome, makeTempDir, runCli } from '../helpers/cli.js';
import { closedPort } from '../helpers/ports.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const IMAGE = sha('the image');
const OTHER = sha('another image');
const FRAMEWORKS = ['eu_ai_act', 'iso_42001', 'soc2_type2', 'iso_27001', 'nist_airf'] as const;

/** DSSE protocol v1: PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body. */
function specPae(type: string, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`DSSEv1 ${Buffer.byteLength(type)} ${type} ${body.length} `), body]);
}

function specVerifies(envelopeText: string, pem: string): boolean {
  const envelope = JSON.parse(envelopeText) as { payloadType: string; payload: string; signatures: { sig: string }[] };
  const body = Buffer.from(envelope.payload, 'base64');
  return envelope.signatures.some((s) => cryptoVerify(null, specPae(envelope.payloadType, body), createPublicKey(pem), Buffer.from(s.sig, 'base64')));
}

/** The embedded store's workspace, read from its credentials file. */
function localWorkspace(home: string): { dbPath: string; workspaceId: string } {
  const dir = join(home, 'data', 'govctl');
  return { dbPath: join(dir, 'govctl.db'), workspaceId: (JSON.parse(readFileSync(join(dir, 'local.json'), 'utf8')) as { workspace_id: string }).workspace_id };
}

async function passEveryGate(dbPath: string, workspaceId: string): Promise<void> {
  for (const framework of FRAMEWORKS) await setGatePolicy(dbPath, { workspaceId, framework, mode: 'advisory', threshold: 0 });
}

describe('on the embedded store', () => {
  it('writes a signed failing verdict, keeps the exit code, logs it, and verify-attestation rejects it as failing', async () => {
    const home = makeHome();
    const check = await runCli(['gates', 'check', '--subject', `ghcr.io/acme/app=sha256:${IMAGE}`, '--attest', 'verdict.json'], { home });
    expect(check.exitCode).toBe(2);
    expect(check.stderr).toMatch(/verdict vrd_\S+ \(exit 2\) signed and logged at leaf 1; envelope written to .*verdict\.json/);
    const envelope = readFileSync(join(home, 'verdict.json'), 'utf8');

    const pem = await runCli(['gates', 'verdict-key', '--format', 'pem'], { home });
    expect(pem.stdout).toMatch(/^-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=\n]+-----END PUBLIC KEY-----\n$/);
    writeFileSync(join(home, 'key.pem'), pem.stdout);
    expect(specVerifies(envelope, pem.stdout)).toBe(true);
    const hex = await runCli(['gates', 'verdict-key'], { home });
    expect(hex.stdout).toMatch(/^[0-9a-f]{64}\n$/);

    const rejected = await runCli(['gates', 'verify-attestation', 'verdict.json', '--subject', `sha256:${IMAGE}`, '--key-file', 'key.pem'], { home });
    expect(rejected.exitCode).toBe(2);
    expect(rejected.stderr).toContain('a blocking gate failed (exit code 2) (failing_verdict)');

    const listed = await runCli(['--json', 'gates', 'verdicts'], { home });
    const { verdicts } = JSON.parse(listed.stdout) as { verdicts: { verdict_id: string; exit_code: number }[] };
    expect(verdicts).toHaveLength(1);
    expect(verdicts[0].exit_code).toBe(2);
    const logKey = (await runCli(['ledger', 'key'], { home })).stdout.trim();
    const proved = await runCli(['ledger', 'prove', verdicts[0].verdict_id, '--ledger-key', logKey], { home });
    expect(proved.exitCode).toBe(0);
    expect(proved.stdout).toMatch(/^kind\tverdict$/m);
  });

  it('verifies a passing verdict offline, and names another artifact, an altered payload, an unknown key', async () => {
    const home = makeHome();
    await runCli(['whoami'], { home }); // provisions the embedded store
    const { dbPath, workspaceId } = localWorkspace(home);
    await passEveryGate(dbPath, workspaceId);
    const check = await runCli(['gates', 'check', '--subject', `app=sha256:${IMAGE}`, '--attest', 'verdict.json'], { home });
    expect(check.exitCode).toBe(0);
    const key = (await runCli(['gates', 'verdict-key'], { home })).stdout.trim();

    // offline: the service the settings name is a closed port, and nothing is asked of it
    const offline = { SERVICE_BASE_URL: `http://127.0.0.1:${await closedPort()}`, SERVICE_API_KEY: 'gk_unused' };
    const verify = (file: string, subject: string, extra: string[] = []) =>
      runCli(['gates', 'verify-attestation', file, '--subject', subject, '--key', key, ...extra], { home, env: offline });
    const ok = await verify('verdict.json', `sha256:${IMAGE}`);
    expect(ok.exitCode).toBe(0);
    expect(ok.stdout).toMatch(/^verdict\tvrd_/m);
    expect(ok.stdout).toContain(`subject\tapp@sha256:${IMAGE}`);
    const json = await runCli(['--json', 'gates', 'verify-attestation', 'verdict.json', '--subject', IMAGE, '--key', key], { home, env: offline });
    expect(JSON.parse(json.stdout)).toMatchObject({ verified: true, exit_code: 0, subject: { name: 'app', sha256: IMAGE } });

    const other = await verify('verdict.json', `sha256:${OTHER}`);
    expect(other.exitCode).toBe(2);
    expect(other.stderr).toContain('(other_subject)');

    const envelope = JSON.parse(readFileSync(join(home, 'verdict.json'), 'utf8')) as { payload: string };
    const statement = Buffer.from(envelope.payload, 'base64').toString('utf8');
    writeFileSync(
      join(home, 'altered.json'),
      JSON.stringify({ ...envelope, payload: Buffer.from(statement.replace('"exit_code":0', '"exit_code":0 ')).toString('base64') }),
    );
    const altered = await verify('altered.json', `sha256:${IMAGE}`);
    expect(altered.exitCode).toBe(2);
    expect(altered.stderr).toContain('(altered)');

    const stranger = await runCli(['gates', 'verify-attestation', 'verdict.json', '--subject', IMAGE, '--key', sha('not the key')], { home, env: offline });
    expect(stranger.exitCode).toBe(2);
    expect(stranger.stderr).toContain('(unknown_key)');
  });

  it('signs a soft failure that only --allow-soft-fail accepts', async () => {
    const home = makeHome();
    await runCli(['whoami'], { home });
    const { dbPath, workspaceId } = localWorkspace(home);
    await passEveryGate(dbPath, workspaceId);
    await setGatePolicy(dbPath, { workspaceId, framework: 'iso_42001', mode: 'advisory', threshold: 90 });
    expect((await runCli(['gates', 'check', '--subject', `app=sha256:${IMAGE}`, '--attest', 'v.json'], { home })).exitCode).toBe(1);
    const key = (await runCli(['gates', 'verdict-key'], { home })).stdout.trim();
    const strict = await runCli(['gates', 'verify-attestation', 'v.json', '--subject', IMAGE, '--key', key], { home });
    expect(strict.exitCode).toBe(2);
    expect(strict.stderr).toContain('(failing_verdict)');
    expect((await runCli(['gates', 'verify-attestation', 'v.json', '--subject', IMAGE, '--key', key, '--allow-soft-fail'], { home })).exitCode).toBe(0);
  });

  it('refuses --subject without --attest, and a subject that is not NAME=sha256:HEX (64)', async () => {
    const home = makeHome();
    const alone = await runCli(['gates', 'check', '--subject', `app=sha256:${IMAGE}`], { home });
    expect(alone.exitCode).toBe(64);
    expect(alone.stderr).toContain('--subject and --attest go together');
    const bad = await runCli(['gates', 'check', '--subject', 'app=sha256:abc', '--attest', 'v.json'], { home });
    expect(bad.exitCode).toBe(64);
    expect(bad.stderr).toContain('the digest of app is not 64 hex digits');
  });
});

describe('govctl admin verdict-key create', () => {
  it('makes a 0600 key file, prints its public key, and never overwrites it', async () => {
    const dir = makeTempDir('govctl-verdict-key-');
    const file = join(dir, 'verdict-key');
    const made = await runCli(['--json', 'admin', 'verdict-key', 'create', '--verdict-key', file]);
    expect(made.exitCode, made.stderr).toBe(0);
    const body = JSON.parse(made.stdout) as { public_key: string; pem: string; keyid: string };
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(body.public_key).toBe(readVerdictKey(file).publicKeyHex);
    expect(body.keyid).toBe(createHash('sha256').update(Buffer.from(body.public_key, 'hex')).digest('hex'));
    expect(readFileSync(file, 'utf8')).not.toContain(body.public_key);
    const again = await runCli(['admin', 'verdict-key', 'create', '--verdict-key', file]);
    expect(again.exitCode).toBe(78);
    expect(again.stderr).toContain('never overwritten');
  });
});

describe('against a service', () => {
  const running: RunningServer[] = [];
  afterEach(async () => {
    for (const server of running.splice(0)) await server.close();
  });

  it('signs with the key the service was given and lists the verdict', async () => {
    const dir = makeTempDir('govctl-attest-');
    const db = join(dir, 'server.db');
    const identity = await provision(db, { orgName: 'o', workspaceName: 'w' });
    createLedgerKey(join(dir, 'ledger-key'));
    createVerdictKey(join(dir, 'verdict-key'));
    const server = await startServer({
      host: '127.0.0.1',
      port: 0,
      db,
      verifyWorkers: 0,
      ledger: { key: readLedgerKey(join(dir, 'ledger-key')), integration: 'manual' },
      verdictKey: readVerdictKey(join(dir, 'verdict-key')),
    });
    running.push(server);
    const env = { SERVICE_BASE_URL: server.url, SERVICE_API_KEY: identity.api_key, SERVICE_SYSTEM_NAME: 'loan-scorer' };
    const home = makeHome();
    const check = await runCli(['--json', 'gates', 'check', '--subject', `a=sha256:${IMAGE}`, '--subject', `b=sha256:${OTHER}`, '--attest', 'v.json'], {
      home,
      env,
    });
    expect(check.exitCode).toBe(2);
    const body = JSON.parse(check.stdout) as { verdict_id: string; envelope: unknown };
    expect(JSON.parse(readFileSync(join(home, 'v.json'), 'utf8'))).toEqual(body.envelope);
    const pem = createPublicKey({
      key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(readVerdictKey(join(dir, 'verdict-key')).publicKeyHex, 'hex')]),
      format: 'der',
      type: 'spki',
    })
      .export({ format: 'pem', type: 'spki' })
      .toString();
    expect(specVerifies(readFileSync(join(home, 'v.json'), 'utf8'), pem)).toBe(true);
    const statement = JSON.parse(Buffer.from((body.envelope as { payload: string }).payload, 'base64').toString('utf8')) as {
      subject: unknown[];
      predicate: { govctlVerdict: { system: string } };
    };
    expect(statement.subject).toHaveLength(2);
    expect(statement.predicate.govctlVerdict.system).toBe('loan-scorer');
    const listed = await runCli(['gates', 'verdicts'], { home, env });
    // piped: tab-separated verdict_id, issued_at, exit_code, result, subjects
    expect(listed.stdout).toMatch(new RegExp(`^${body.verdict_id}\\t\\S+Z\\t2\\thard fail\\ta@sha256:${IMAGE},b@sha256:${OTHER}\\n$`));
  });
});
