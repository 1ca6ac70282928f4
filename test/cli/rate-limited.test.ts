/**
 * Exit code 75 reached by a real cause (docs/exit-codes.md; the retry rule of
 * docs/library.md "Settings"): a service that answers 429 with `Retry-After`, once waited for and retried, and still
 * 429 → 75 with one stderr line that says so and what to do. The service is a scripted HTTP server
 * on 127.0.0.1 (test/helpers/fault-server.ts) that answers GET /api/me as the service does and 429
 * to the write, so that the requests can be checked; the last case runs the real service, its
 * budget clock injected. The client's wait before the retry is injected too: it records what was
 * asked for and returns at once, so the tests assert the wait without waiting it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { provision, startServer } from '../../src/server/index.js';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import { serviceLikeHandler, startFaultServer, type FaultHandler, type FaultServer, type RecordedRequest } from '../helpers/fault-server.js';

const API_KEY = 'gk_ratelimitedtestkey0123456789abcdefABCDEF';
const WORKSPACE = 'ws_rate_limited';
const HASH_IN = 'a'.repeat(64);
const HASH_OUT = 'b'.repeat(64);

const evidenceAdd = [
  'evidence',
  'add',
  'change_event',
  '--system',
  'rl-system',
  '--type',
  'deployment',
  '--by',
  'ci@example.com',
  '--description',
  'v1',
  '--environment',
  'production',
];
const attest = ['attest', 'summarise', '--input-hash', HASH_IN, '--output-hash', HASH_OUT, '--system', 'rl-system'];

// The message says nothing of when: what the user is told to do must come from the CLI itself.
const RATE_LIMITED = { status: 429, headers: { 'retry-after': '1' }, body: { error: 'rate_limited', message: 'too many requests' } };

/** Answers like the service, except `limited` writes (POSTs to a path ending in `suffix`) get 429. */
function limitWrites(suffix: string, limited: number): FaultHandler {
  const service = serviceLikeHandler({ workspaceId: WORKSPACE });
  let seen = 0;
  return (request) => {
    if (request.method === 'POST' && request.url.split('?')[0].endsWith(suffix) && seen++ < limited) return RATE_LIMITED;
    return service(request);
  };
}

const posts = (server: FaultServer, suffix: string): RecordedRequest[] =>
  server.requests.filter((request) => request.method === 'POST' && request.url.split('?')[0].endsWith(suffix));

let server: FaultServer | undefined;

beforeAll(async () => {
  await ensureBuilt();
});

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A wait that records what it was asked for and returns at once. */
function recordedWaits(): { waits: number[]; sleep: (ms: number, signal?: AbortSignal) => Promise<void> } {
  const waits: number[] = [];
  return {
    waits,
    sleep: async (ms, signal) => {
      signal?.throwIfAborted();
      waits.push(ms);
    },
  };
}

async function run(args: readonly string[], handler: FaultHandler) {
  server = await startFaultServer({ handler });
  const { waits, sleep } = recordedWaits();
  const result = await runCli(args, { env: { SERVICE_BASE_URL: server.url, SERVICE_API_KEY: API_KEY }, sleep });
  return { ...result, waits, server };
}

describe('still rate limited after the retry: exit 75', () => {
  it('evidence add says it waits for Retry-After, retries once, and exits 75 with one line saying when to try again', async () => {
    const result = await run(evidenceAdd, limitWrites('/grc/evidence', 2));
    expect(result.exitCode).toBe(75);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    // a pause of up to a minute is said as it starts: silent, it reads as a hang
    expect(lines[0]).toBe('govctl: waiting 1 s (rate limited)');
    expect(lines[1]).toMatch(/^govctl: .*rate limited/i);
    expect(lines[1]).toMatch(/wait .*(again|retry)|try again|run the command again/i);
    expect(lines[1]).toContain('wait 1 second and run the command again'); // the service's Retry-After
    expect(result.stderr).not.toContain(API_KEY);

    const sent = posts(result.server, '/grc/evidence');
    expect(sent).toHaveLength(2);
    expect(sent[0].url).toBe(`/api/workspaces/${WORKSPACE}/governance/grc/evidence`);
    expect(sent[1].body).toBe(sent[0].body); // the same record, sent again
    expect(result.waits).toEqual([1000]); // the service's Retry-After, waited once, before the retry
    expect(result.server.requests.filter((request) => request.url === '/api/me')).toHaveLength(1);
    expect(result.server.count).toBe(3);
  });

  it('attest waits, retries once, and exits 75 the same way', async () => {
    const result = await run(attest, limitWrites('/attestations/external', 2));
    expect(result.exitCode).toBe(75);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toEqual(['govctl: waiting 1 s (rate limited)', expect.stringMatching(/^govctl: .*rate limited/i)]);
    expect(lines[1]).toMatch(/wait .*(again|retry)|try again|run the command again/i);

    const sent = posts(result.server, '/attestations/external');
    expect(sent).toHaveLength(2);
    expect(sent[1].body).toBe(sent[0].body);
    expect(result.waits).toEqual([1000]); // the service's Retry-After, waited once, before the retry
  });

  it('with --json, the error is one {error: "rate_limited", message} object on stderr and stdout stays empty', async () => {
    const result = await run([...evidenceAdd, '--json'], limitWrites('/grc/evidence', 2));
    expect(result.exitCode).toBe(75);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    const error = JSON.parse(result.stderr) as { error: string; message: string };
    expect(error.error).toBe('rate_limited');
    expect(error.message).toMatch(/rate limited/i);
    expect(posts(result.server, '/grc/evidence')).toHaveLength(2);
  });

  it('--on-error warn turns it into a warning and exit 0, after the same wait and retry', async () => {
    const result = await run([...evidenceAdd, '--on-error', 'warn'], limitWrites('/grc/evidence', 2));
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(/^govctl: waiting 1 s \(rate limited\)\ngovctl: warning: .*rate limited.*\(not failing: --on-error warn\)\n$/i);
    expect(posts(result.server, '/grc/evidence')).toHaveLength(2);
    expect(result.waits).toEqual([1000]);
  });
});

describe('rate limited once: the retry succeeds', () => {
  it('evidence add waits for Retry-After and stores the record on the second attempt (exit 0)', async () => {
    const result = await run(evidenceAdd, limitWrites('/grc/evidence', 1));
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe('govctl: waiting 1 s (rate limited)\n');
    expect(result.stdout).toMatch(/^rec_\d+\tchange_event\tok\t/);
    const sent = posts(result.server, '/grc/evidence');
    expect(sent).toHaveLength(2);
    expect(result.waits).toEqual([1000]); // the service's Retry-After, waited once, before the retry
  });

  it('attest waits and pushes the attestation on the second attempt (exit 0)', async () => {
    const result = await run(attest, limitWrites('/attestations/external', 1));
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe('govctl: waiting 1 s (rate limited)\n');
    expect(result.stdout).toMatch(/^att_\d+\t/);
    expect(posts(result.server, '/attestations/external')).toHaveLength(2);
    expect(result.waits).toEqual([1000]);
  });
});

describe('the real service', () => {
  // The service's budget clock is injected: the workspace's window started 59.5 s "ago", so its
  // 429 says Retry-After 1; the CLI's wait is injected too and does not move the service's clock,
  // so its retry meets the same window.
  it('govctl posture exits 75 once the workspace has used up its requests, after waiting for Retry-After and retrying once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'govctl-rate-limited-'));
    const db = join(dir, 'server.db');
    const tenant = await provision(db, { orgName: 'rl', workspaceName: 'rl' });
    const clock = { ms: Date.UTC(2026, 5, 1, 12, 0, 0) };
    const service = await startServer({ db, port: 0, verifyWorkers: 0, rateLimitPerMinute: 1, budgetNowMs: () => clock.ms });
    try {
      const first = await fetch(`${service.url}/api/me`, { headers: { authorization: `Bearer ${tenant.api_key}` } });
      expect(first.status).toBe(200);
      clock.ms += 59_500;
      const { waits, sleep } = recordedWaits();
      const result = await runCli(['posture'], {
        env: { SERVICE_BASE_URL: service.url, SERVICE_API_KEY: tenant.api_key, SERVICE_WORKSPACE_ID: tenant.workspace_id },
        sleep,
      });
      expect(result.exitCode).toBe(75);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^govctl: .*rate limited/i);
      expect(result.stderr).toContain('wait 1 second and run the command again');
      expect(waits).toEqual([1000]);
    } finally {
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
