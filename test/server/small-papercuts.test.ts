/**
 * Small replies of the service: a repeated Idempotency-Key is "must be given once", and the
 * export's limit names no bound of the number type.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

function send(method: string, path: string, headers: string[], body?: string): Promise<{ status: number; json: { message?: string; field?: string } }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { method, headers: ['Host', new URL(server.url).host, ...headers], timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as { message?: string } });
        } catch {
          reject(new Error(`${res.statusCode}: ${text}`));
        }
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('small replies', () => {
  it('answers two Idempotency-Key headers with "must be given once"', async () => {
    const body = JSON.stringify({
      record_type: 'change_event',
      system_name: 's',
      payload: { type: 'deployment', by: 'a@example.com', description: 'd', environment: 'production', system: 's' },
    });
    const reply = await send(
      'POST',
      `/api/workspaces/${server.workspaceId}/governance/grc/evidence`,
      ['Authorization', `Bearer ${server.apiKey}`, 'Content-Type', 'application/json', 'Idempotency-Key', 'key-one-1234', 'Idempotency-Key', 'key-two-5678'],
      body,
    );
    expect(reply.status).toBe(422);
    expect(reply.json.message).toContain('must be given once');
  });

  it("does not name the number type's largest integer as the export's limit", async () => {
    const reply = await send('GET', `/api/workspaces/${server.workspaceId}/governance/grc/evidence/export?limit=0`, [
      'Authorization',
      `Bearer ${server.apiKey}`,
    ]);
    expect(reply.status).toBeGreaterThanOrEqual(400);
    expect(reply.json.message).not.toContain('9007199254740991');
    expect(reply.json.message).toContain('at least 1');
  });
});
