/**
 * Backpressure (docs/security.md, "Abusive clients"): connections that pipeline requests for a
 * large record and never read the replies. The service answers a connection's requests one at a
 * time and stops reading the connection while its replies are not read, so it stops answering
 * these connections and its peak RSS (/proc/<pid>/status VmHWM of a spawned `govctl serve`) stays
 * far below what all the replies would take. The latency other tenants see meanwhile is a figure
 * measured by bench/abuse.mjs, not asserted here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedgerKey, provision } from '../../src/server/index.js';
import { testStoreLocation } from '../helpers/backend.js';
import { BIN, codeCacheEnv, ensureBuilt } from '../helpers/cli.js';
import { evidenceRecord, wsPath } from '../helpers/service-requests.js';

const CONNECTIONS = 20;
const PIPELINED = 40;
/** The service's memory with nothing to do is ~100-150 MB; the replies these requests ask for total 20 × 40 × 0.9 MB. */
const PEAK_RSS_BOUND_MB = 300;
/** Round trips of another client's request with no flood request answered that make the flood "stalled". */
const STILL_PROBES = 5;
const MAX_PROBES = 2000;

let dir: string;
let child: ChildProcess;
let url: string;
let identity: { api_key: string; workspace_id: string };
let served = 0;
let pending = '';

function vmHwmMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

beforeAll(async () => {
  await ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'govctl-backpressure-'));
  const db = await testStoreLocation('backpressure', dir);
  identity = await provision(db, { orgName: 'flood', workspaceName: 'flood' });
  const logKey = join(dir, 'ledger-key');
  createLedgerKey(logKey); // as `govctl admin init` does
  child = spawn(process.execPath, [BIN, 'serve', '--db', db, '--log-key', logKey, '--port', '0'], {
    env: { PATH: process.env.PATH ?? '', HOME: dir, NO_COLOR: '1', ...codeCacheEnv() },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  url = await new Promise<string>((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
      const lines = (pending + text).split('\n');
      pending = lines.pop()!;
      // answered requests for a record (not the probes of GET /api/me)
      served += lines.filter((line) => line.includes('"status":200') && line.includes('/grc/evidence/')).length;
      const found = /listening on (http:\/\/\S+)/.exec(stderr)?.[1];
      if (found) resolve(found);
    });
    child.once('exit', () => reject(new Error(`govctl serve exited: ${stderr}`)));
  });
}, 30_000);

afterAll(() => {
  child?.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('pipelined requests whose replies are never read', () => {
  it(`${CONNECTIONS} connections × ${PIPELINED} requests for a 0.9 MB record: peak RSS stays below ${PEAK_RSS_BOUND_MB} MB and another client is still answered`, async () => {
    const auth = { authorization: `Bearer ${identity.api_key}`, 'content-type': 'application/json' };
    const big = evidenceRecord('change_event', {
      payload: { type: 'deployment', by: 'ci@example.com', description: 'x'.repeat(900_000), environment: 'production', system: 'chatbot' },
    });
    const stored = await fetch(url + wsPath(identity.workspace_id, 'grc/evidence'), { method: 'POST', headers: auth, body: JSON.stringify(big) });
    expect(stored.status).toBe(201);
    const { record_id: recordId } = (await stored.json()) as { record_id: string };
    const path = wsPath(identity.workspace_id, `grc/evidence/${recordId}`);
    const one = await fetch(url + path, { headers: auth });
    expect(one.status).toBe(200);
    expect((await one.text()).length).toBeGreaterThan(900_000);
    const servedBefore = served;
    const port = Number(new URL(url).port);

    const request = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${identity.api_key}\r\n\r\n`;
    const sockets: Socket[] = [];
    for (let i = 0; i < CONNECTIONS; i += 1) {
      const socket = connect({ host: '127.0.0.1', port });
      socket.on('error', () => {});
      // never read: the replies pile up in the kernel, then in the service unless it stops
      socket.pause();
      socket.write(request.repeat(PIPELINED));
      sockets.push(socket);
    }
    try {
      // Wait until the service has done all it will for the flood: the count of answered requests
      // stays the same over a few round trips of another client's request (each one a few turns of
      // the service's event loop), a bounded number of times.
      let answered = served - servedBefore;
      let still = 0;
      for (let probe = 0; probe < MAX_PROBES && still < STILL_PROBES; probe += 1) {
        const me = await fetch(`${url}/api/me`, { headers: auth, signal: AbortSignal.timeout(10_000) });
        // another client is answered meanwhile
        expect(me.status).toBe(200);
        await me.arrayBuffer();
        const now = served - servedBefore;
        still = now === answered ? still + 1 : 0;
        answered = now;
      }
      const peak = vmHwmMb(child.pid!);
      if (process.env.GOVCTL_TEST_FIGURES) console.log(`peak RSS ${peak.toFixed(0)} MB, ${answered} of ${CONNECTIONS * PIPELINED} requests answered`);
      expect(still).toBe(STILL_PROBES);
      // the connections whose replies are not read stopped being answered
      expect(answered).toBeLessThan(CONNECTIONS * PIPELINED);
      expect(peak).toBeLessThan(PEAK_RSS_BOUND_MB);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  }, 60_000);
});
