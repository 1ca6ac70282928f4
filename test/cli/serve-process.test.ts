/**
 * `govctl serve` as a process: it prints its URL on stderr (so `--port 0` works), answers
 * requests, logs each as a JSON line on stderr, and on SIGTERM (or SIGINT) shuts down promptly
 * with exit 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanEnv, codeCacheEnv, ensureBuilt, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/cli-fixtures.js';

beforeAll(ensureBuilt);

const temp = tempDir();
const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  temp.remove();
});

interface Served {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

/** Starts `govctl serve` and waits for the URL on stderr. */
async function serve(args: string[]): Promise<Served> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    env: cleanEnv(temp.dir, { ...codeCacheEnv(), NO_COLOR: '1' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL within 15 s; stderr: ${stderr}`)), 15_000);
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then(({ code }) => reject(new Error(`serve exited with ${code} before listening: ${stderr}`)));
  });
  return { child, url, stderr: () => stderr, exited };
}

describe('govctl serve', () => {
  it('serves on --port 0, logs requests as JSON lines, and exits 0 promptly on SIGTERM', async () => {
    const db = join(temp.dir, 'served.db');
    const init = await runCli(['admin', 'init', '--db', db, '--json'], {});
    expect(init.exitCode, init.stderr).toBe(0);
    const { api_key: apiKey, workspace_id: workspaceId } = JSON.parse(init.stdout);

    const served = await serve(['--port', '0', '--db', db]);
    const me = await fetch(`${served.url}/api/me`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { workspace_id: string }).workspace_id).toBe(workspaceId);

    // The CLI works against it.
    const posture = await runCli(['posture', '--json'], { env: { SERVICE_BASE_URL: served.url, SERVICE_API_KEY: apiKey } });
    expect(posture.exitCode, posture.stderr).toBe(0);
    expect(JSON.parse(posture.stdout)).toHaveProperty('overall_pct', 0);

    const sent = Date.now();
    served.child.kill('SIGTERM');
    const { code, signal, at } = await served.exited;
    expect(signal).toBeNull();
    expect(code).toBe(0);
    expect(at - sent).toBeLessThan(5_000);

    const logs = served
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logs).toContainEqual(expect.objectContaining({ method: 'GET', path: '/api/me', status: 200 }));
    expect(served.stderr()).not.toContain(apiKey);
    expect(served.stderr()).toMatch(/SIGTERM: shutting down/);
  });

  it('makes <data dir>/server.db by default, hints at admin init, and exits 0 on SIGINT too', async () => {
    const served = await serve(['--port', '0']);
    expect(existsSync(join(temp.dir, 'data', 'govctl', 'server.db'))).toBe(true);
    expect(served.stderr()).toMatch(/no API keys yet: run `govctl admin init --db /);
    served.child.kill('SIGINT');
    const { code } = await served.exited;
    expect(code).toBe(0);
  });

  it('exits 78 when the port is in use', async () => {
    const first = await serve(['--port', '0', '--db', join(temp.dir, 'a.db')]);
    const port = new URL(first.url).port;
    const second = await runCli(['serve', '--port', port, '--db', join(temp.dir, 'b.db')], {});
    expect(second.exitCode).toBe(78);
    expect(second.stderr).toMatch(/port is in use/);
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
  });
});

describe('govctl serve: the verdict key', () => {
  it('makes <db>.verdict-key (0600) beside the database and signs verdicts with it', async () => {
    const db = join(temp.dir, 'verdicts.db');
    const init = await runCli(['admin', 'init', '--db', db, '--json'], {});
    const { api_key: apiKey } = JSON.parse(init.stdout) as { api_key: string };
    const served = await serve(['--port', '0', '--db', db]);
    const keyFile = `${db}.verdict-key`;
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const env = { SERVICE_BASE_URL: served.url, SERVICE_API_KEY: apiKey };
    const digest = 'a'.repeat(64);
    const check = await runCli(['gates', 'check', '--subject', `app=sha256:${digest}`, '--attest', join(temp.dir, 'v.json')], { env });
    expect(check.exitCode).toBe(2);
    // the key the service publishes is the file's, and the envelope verifies with it offline
    const published = (await runCli(['gates', 'verdict-key'], { env })).stdout.trim();
    const fromFile = (await import('../../src/server/index.js')).readVerdictKey(keyFile).publicKeyHex;
    expect(published).toBe(fromFile);
    const verified = await runCli(['gates', 'verify-attestation', join(temp.dir, 'v.json'), '--subject', digest, '--key', fromFile, '--allow-soft-fail'], {});
    expect(verified.stderr).toContain('(failing_verdict)'); // signed and about this artifact; only the result fails
    served.child.kill('SIGTERM');
    expect((await served.exited).code).toBe(0);
  });

  it('exits 78 naming --verdict-key when the file named is missing or readable by others', async () => {
    const db = join(temp.dir, 'verdicts-78.db');
    const missing = await runCli(['serve', '--port', '0', '--db', db, '--verdict-key', join(temp.dir, 'nope')], {});
    expect(missing.exitCode).toBe(78);
    expect(missing.stderr).toMatch(/no verdict key file .*nope/);
    const open = join(temp.dir, 'open-verdict-key');
    (await import('../../src/server/index.js')).createVerdictKey(open);
    chmodSync(open, 0o644);
    const readable = await runCli(['serve', '--port', '0', '--db', db, '--verdict-key', open], {});
    expect(readable.exitCode).toBe(78);
    expect(readable.stderr).toContain('readable by others');
  });
});

describe('govctl serve: attestation batches on verify workers', () => {
  it('checks every signature of a batch on its workers as in the request thread, in order', async () => {
    const { SigningKey, buildAttestation, legacyWitnessMessage, signWitness } = await import('../../src/core/index.js');
    const db = join(temp.dir, 'workers.db');
    const init = await runCli(['admin', 'init', '--db', db, '--json'], {});
    const { api_key: apiKey, workspace_id: workspaceId } = JSON.parse(init.stdout);
    const { key } = SigningKey.generate();
    const expected: string[] = [];
    const records = Array.from({ length: 40 }, (_, i) => {
      const record = buildAttestation({
        systemName: 'loan-scorer',
        toolName: `tool-${i}`,
        inputHash: 'a'.repeat(64),
        outputHash: 'b'.repeat(64),
        executedAt: `2026-11-01T00:00:${String(i).padStart(2, '0')}.000Z`,
      });
      switch (i % 4) {
        case 0:
          expected.push('accepted canonical');
          return { ...record, ...signWitness({ ...record }, workspaceId, key) };
        case 1:
          expected.push('accepted legacy');
          return { ...record, witness_sig: key.ed25519SignHex(legacyWitnessMessage({ ...record })), verifying_key_hex: key.publicKeyHex };
        case 2:
          expected.push('rejected records.' + i + '.witness_sig');
          return { ...record, ...signWitness({ ...record }, 'ws_another', key) };
        default:
          expected.push('accepted declared');
          return record;
      }
    });
    const outcomes: string[][] = [];
    // Each run on its own copy of the provisioned database: a signature is accepted once per database.
    copyFileSync(db, `${db}.0`);
    copyFileSync(`${db}.ledger-key`, `${db}.0.ledger-key`); // the log key goes with its database
    for (const workers of ['1', '0']) {
      const served = await serve(['--port', '0', '--db', workers === '1' ? db : `${db}.0`, '--verify-workers', workers]);
      expect(served.stderr()).toContain(workers === '1' ? '1 verify worker)' : '0 verify workers)');
      const reply = await fetch(`${served.url}/api/workspaces/${workspaceId}/governance/attestations/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ records }),
      });
      expect(reply.status).toBe(200);
      const body = (await reply.json()) as { accepted: number; results: { index: number; status: string; trust_tier?: string; field?: string }[] };
      expect(body.accepted).toBe(30);
      outcomes.push(
        body.results.map((result, i) => {
          expect(result.index).toBe(i);
          if (result.status === 'rejected') return `rejected ${result.field}`;
          return `accepted ${result.trust_tier === 'declared' ? 'declared' : ''}`.trim();
        }),
      );
      served.child.kill('SIGTERM');
      expect((await served.exited).code).toBe(0);
    }
    const shape = expected.map((e) => (e.startsWith('accepted') && e !== 'accepted declared' ? 'accepted' : e));
    expect(outcomes[0]).toEqual(shape);
    expect(outcomes[1]).toEqual(outcomes[0]);
  });
});
