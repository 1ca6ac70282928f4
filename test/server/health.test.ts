/**
 * What a load balancer asks (docs/deploy.md): /api/health (alive, no key) and /api/ready (this
 * replica's database answers, no key), each saying nothing about any workspace.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteOnly } from '../helpers/backend.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function get(path: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${server!.url}${path}`);
  return { status: response.status, body: await response.json() };
}

describe('health and readiness', () => {
  it('answers /api/health and /api/ready without an API key, with nothing about the data', async () => {
    server = await startTestServer();
    expect(await get('/api/health')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get('/api/ready')).toEqual({ status: 200, body: { status: 'ready' } });
  });

  // SQLite-only: a file replaced under the service. PostgreSQL's readiness while its server is
  // down: test/server/postgres/replica-crashes.test.ts.
  it.skipIf(sqliteOnly)('is not ready once its database file was replaced (writes would be lost), while it stays alive', async () => {
    server = await startTestServer();
    renameSync(server.dbPath, `${server.dbPath}.moved`);
    writeFileSync(server.dbPath, '');
    expect(await get('/api/ready')).toEqual({ status: 503, body: { status: 'unavailable' } });
    expect(await get('/api/health')).toEqual({ status: 200, body: { status: 'ok' } });
  });
});
