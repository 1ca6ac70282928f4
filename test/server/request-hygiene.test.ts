/**
 * Requests a client should not be able to make the service work for (docs/security.md, "Abusive
 * clients" and "Input hygiene"): a refused request's body is never read, a second Authorization
 * header and CONNECT are answered in the error shape, invalid UTF-8 is a 400 and impossible dates a
 * 422 naming the field. Raw sockets on 127.0.0.1, each bounded in bytes and time.
 */
import { connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provision, startServer } from '../../src/server/index.js';
import { testStoreLocation } from '../helpers/backend.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { attestation, call, evidenceRecord, wsPath } from '../helpers/service-requests.js';

let server: TestServer;
let limited: TestServer;
let port: number;

beforeAll(async () => {
  server = await startTestServer();
  limited = await startTestServer({ rateLimitPerMinute: 1 });
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server.stop();
  await limited.stop();
});

/** Most body bytes a test offers: far more than any socket buffer between the two ends. */
const OFFERED = 256 * 1024 * 1024;
const CHUNK = Buffer.alloc(1024 * 1024, 0x61);

interface Upload {
  /** the reply as text (status line, headers, body) */
  reply: string;
  /** body bytes the client managed to hand to its kernel before the service closed the connection */
  written: number;
  /** the service closed the connection (rather than the offer running out) */
  closed: boolean;
}

/**
 * Sends `head` announcing a huge body, then offers body bytes (1 MiB at a time, up to
 * {@link OFFERED}) for as long as the connection takes them, reading whatever comes back.
 */
function uploadHuge(target: number, head: string): Promise<Upload> {
  return new Promise((resolve) => {
    const socket: Socket = connect({ host: '127.0.0.1', port: target });
    const chunks: Buffer[] = [];
    let written = 0;
    let closed = false;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ reply: Buffer.concat(chunks).toString('latin1'), written, closed });
    };
    // The whole upload is bounded: an old service reads all 256 MiB in well under this.
    const timer = setTimeout(finish, 20_000);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => {
      closed = true;
      finish();
    });
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.write(head);
    const pump = () => {
      while (!finished && written < OFFERED) {
        written += CHUNK.length;
        if (!socket.write(CHUNK)) {
          socket.once('drain', pump);
          return;
        }
      }
      if (written >= OFFERED) setTimeout(finish, 500);
    };
    pump();
  });
}

function postHead(path: string, headers: Record<string, string>): string {
  const lines = [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Content-Type: application/json', 'Content-Length: 100000000000'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** The kernel buffers on both ends take a few MiB; a service that reads on takes everything offered. */
const MOST_UNREAD_TAKEN = 48 * 1024 * 1024;

describe('a request refused before its body is read', () => {
  it.each([
    ['401 without an API key', () => ({ target: port, head: postHead(wsPath(server.workspaceId, 'grc/evidence'), {}) }), 401],
    [
      '404 for another workspace',
      () => ({ target: port, head: postHead(wsPath('ws_someone_else', 'grc/evidence'), { Authorization: `Bearer ${server.apiKey}` }) }),
      404,
    ],
    [
      '413 over the body limit',
      () => ({ target: port, head: postHead(wsPath(server.workspaceId, 'grc/evidence'), { Authorization: `Bearer ${server.apiKey}` }) }),
      413,
    ],
    // Fastify checks the announced length before routing: 413 rather than 404
    ['no such endpoint', () => ({ target: port, head: postHead('/api/nowhere', { Authorization: `Bearer ${server.apiKey}` }) }), 413],
  ])(
    '%s: answered with Connection: close, and the connection is closed without reading the 100 GB body',
    async (_name, setup, status) => {
      const { target, head } = setup();
      const upload = await uploadHuge(target, head);
      expect(upload.reply).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(upload.reply.toLowerCase()).toContain('connection: close');
      expect(JSON.parse(upload.reply.slice(upload.reply.indexOf('\r\n\r\n') + 4))).toHaveProperty('error');
      expect(upload.closed).toBe(true);
      expect(upload.written).toBeLessThan(MOST_UNREAD_TAKEN);
    },
    30_000,
  );

  it('429 over the request budget: the same; a refused GET or a refused small body keeps its connection', async () => {
    const noKey = await fetch(`${server.url}/api/me`);
    expect(noKey.status).toBe(401);
    expect(noKey.headers.get('connection')).not.toBe('close');
    const small = await call(server, 'POST', wsPath(server.workspaceId, 'grc/evidence'), { apiKey: null, body: evidenceRecord() });
    expect(small.status).toBe(401);
    expect(small.headers.get('connection')).not.toBe('close');

    const limitedPort = Number(new URL(limited.url).port);
    expect((await call(limited, 'GET', '/api/me')).status).toBe(200);
    const upload = await uploadHuge(limitedPort, postHead(wsPath(limited.workspaceId, 'grc/evidence'), { Authorization: `Bearer ${limited.apiKey}` }));
    expect(upload.reply).toMatch(/^HTTP\/1\.1 429 /);
    expect(upload.reply.toLowerCase()).toContain('retry-after: ');
    expect(upload.reply.toLowerCase()).toContain('connection: close');
    expect(upload.closed).toBe(true);
    expect(upload.written).toBeLessThan(MOST_UNREAD_TAKEN);
  }, 30_000);
});

/** Sends `text` over a fresh connection and resolves with everything the service sends back before closing. */
function rawExchange(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    socket.setTimeout(5_000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.end(text);
  });
}

function bodyOf(reply: string): Record<string, unknown> {
  return JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
}

describe('headers and methods', () => {
  it('a second Authorization header is a 400, whichever of the two is valid', async () => {
    for (const [first, second] of [
      [server.apiKey, 'gk_someone_elses_key'],
      [server.apiKey, server.apiKey],
    ]) {
      const reply = await rawExchange(
        `GET /api/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${first}\r\nAuthorization: Bearer ${second}\r\nConnection: close\r\n\r\n`,
      );
      expect(reply).toMatch(/^HTTP\/1\.1 400 /);
      expect(bodyOf(reply)).toEqual({ error: 'bad_request', message: expect.stringMatching(/more than one Authorization header/) });
    }
    // one header still works
    expect((await call(server, 'GET', '/api/me')).status).toBe(200);
  });

  it('HEAD of a GET endpoint is answered like the GET, without a body (the embedded store alone leaves HEAD out)', async () => {
    const get = await call(server, 'GET', '/api/me');
    const head = await call(server, 'HEAD', '/api/me');
    expect(get.status).toBe(200);
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
  });

  it('headers over the limit are a 431 whose status line and message say so, in the error shape', async () => {
    const reply = await rawExchange(`GET /api/me HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(reply).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(bodyOf(reply)).toEqual({ error: 'bad_request', message: 'the request headers are too large' });
  });

  it('CONNECT (which Node would drop unanswered) and other unsupported methods are answered in the error shape', async () => {
    const reply = await rawExchange('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1\.1 405 /);
    expect(bodyOf(reply)).toEqual({ error: 'bad_request', message: expect.stringContaining('CONNECT') });
    for (const method of ['TRACE', 'PROPFIND', 'OPTIONS', 'BREW']) {
      const other = await rawExchange(`${method} /api/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.apiKey}\r\nConnection: close\r\n\r\n`);
      expect(other, method).toMatch(/^HTTP\/1\.1 4\d\d /);
      const body = bodyOf(other);
      expect(typeof body.error, method).toBe('string');
      expect(typeof body.message, method).toBe('string');
    }
  });
});

describe('request bodies', () => {
  it('a body that is not valid UTF-8 is a 400 bad_request, and nothing is stored', async () => {
    const valid = Buffer.from(JSON.stringify(evidenceRecord('change_event', { system_name: 'utf8-probe' })), 'utf8');
    // a lone continuation byte inside the system name's string
    const at = valid.indexOf('utf8-probe') + 4;
    const invalid = Buffer.concat([valid.subarray(0, at), Buffer.from([0x80]), valid.subarray(at)]);
    const response = await fetch(server.url + wsPath(server.workspaceId, 'grc/evidence'), {
      method: 'POST',
      headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
      body: invalid,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'bad_request', message: 'the request body is not valid UTF-8' });
    const systems = await call(server, 'GET', wsPath(server.workspaceId, 'grc/systems'));
    expect(JSON.stringify(systems.json)).not.toContain('utf8');
  });

  it('a compressed body (Content-Encoding gzip) is a 400 that says to send it uncompressed, and nothing is stored', async () => {
    const body = gzipSync(Buffer.from(JSON.stringify(evidenceRecord('change_event', { system_name: 'gzip-probe' })), 'utf8'));
    const response = await fetch(server.url + wsPath(server.workspaceId, 'grc/evidence'), {
      method: 'POST',
      headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'bad_request', message: 'Content-Encoding gzip is not accepted: send the JSON body uncompressed' });
    const systems = await call(server, 'GET', wsPath(server.workspaceId, 'grc/systems'));
    expect(JSON.stringify(systems.json)).not.toContain('gzip-probe');
  });

  it.each([
    ['2026-02-30T10:00:00Z', '30 February'],
    ['2025-02-29T10:00:00Z', '29 February of a common year'],
    ['2026-04-31T10:00:00Z', '31 April'],
    ['2026-01-31T24:00:00Z', 'hour 24'],
    ['2026-01-31T23:59:60Z', 'second 60'],
  ])('occurred_at %s (%s) is a 422 on occurred_at', async (date) => {
    const reply = await call(server, 'POST', wsPath(server.workspaceId, 'grc/evidence'), { body: evidenceRecord('change_event', { occurred_at: date }) });
    expect(reply.status).toBe(422);
    expect(reply.json).toMatchObject({ error: 'validation_error', field: 'occurred_at' });
  });

  it('an attestation executed at 2026-02-30 is a 422 on executed_at, in a batch on records.N.executed_at; real edge dates pass', async () => {
    const single = await call(server, 'POST', wsPath(server.workspaceId, 'attestations/external'), {
      body: attestation({ executed_at: '2026-02-30T00:00:00Z' }),
    });
    expect(single.status).toBe(422);
    expect(single.json).toMatchObject({ error: 'validation_error', field: 'executed_at' });
    const batch = await call(server, 'POST', wsPath(server.workspaceId, 'attestations/batch'), {
      body: { records: [attestation(), attestation({ executed_at: '2026-01-01T24:00:00Z' })] },
    });
    expect(batch.status).toBe(200);
    expect(batch.json.results[1]).toMatchObject({ status: 'rejected', field: 'records.1.executed_at' });
    // while a leap day and the last second of a day are accepted
    for (const date of ['2024-02-29T12:00:00Z', '2026-01-31T23:59:59.999+01:00']) {
      const reply = await call(server, 'POST', wsPath(server.workspaceId, 'grc/evidence'), { body: evidenceRecord('change_event', { occurred_at: date }) });
      expect(reply.status, date).toBe(201);
    }
  });
});

describe('connection caps and timeouts', () => {
  /** Writes `count` pipelined GET /api/me in one write and resolves with the replies' status lines once the connection closes. */
  function pipeline(target: number, count: number, apiKey: string): Promise<string[]> {
    return new Promise((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: target });
      const chunks: Buffer[] = [];
      socket.on('data', (chunk) => chunks.push(chunk));
      socket.on('error', () => {});
      socket.on('close', () =>
        resolve(
          Buffer.concat(chunks)
            .toString('latin1')
            .match(/HTTP\/1\.1 \d{3}/g) ?? [],
        ),
      );
      const one = `GET /api/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`;
      // the last one asks to close, so that a connection answered in full ends too
      socket.write(one.repeat(count - 1) + one.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'));
    });
  }

  it('a client pipelining up to 4 × maxPipelined requests gets every answer; one that pipelines further is disconnected', async () => {
    const db = await testStoreLocation('pipelined');
    const identity = await provision(db, { orgName: 'pipelined', workspaceName: 'pipelined' });
    const capped = await startServer({ db, port: 0, limits: { maxPipelined: 2 } });
    const cappedPort = Number(new URL(capped.url).port);
    try {
      // reading stops at 2 waiting and resumes as they are answered: all 9 are answered (8 waiting at most)
      expect(await pipeline(cappedPort, 9, identity.api_key)).toEqual(Array(9).fill('HTTP/1.1 200'));
      // a 10th in the same write makes 9 waiting: the connection closes before answering them all
      const flooded = await pipeline(cappedPort, 40, identity.api_key);
      expect(flooded.length).toBeLessThan(40);
    } finally {
      await capped.close();
    }
  });

  it('a client that sends its headers too slowly gets a 408 after the headers timeout; connections beyond the cap are closed', async () => {
    const capped = await startServer({
      db: await testStoreLocation('capped'),
      port: 0,
      limits: { headersTimeoutMs: 1000, maxConnections: 2 },
    });
    const cappedPort = Number(new URL(capped.url).port);
    const sockets: Socket[] = [];
    try {
      // slow headers: the request line and one header, then nothing
      const slow = connect({ host: '127.0.0.1', port: cappedPort });
      sockets.push(slow);
      const started = Date.now();
      const slowReply = new Promise<{ text: string; ms: number }>((resolve) => {
        const chunks: Buffer[] = [];
        slow.on('data', (chunk) => chunks.push(chunk));
        slow.on('error', () => {});
        slow.on('close', () => resolve({ text: Buffer.concat(chunks).toString('utf8'), ms: Date.now() - started }));
      });
      slow.write('GET /api/me HTTP/1.1\r\nHost: 127.0.0.1\r\n');

      // a second connection fills the cap; a third is closed without an answer
      const second = connect({ host: '127.0.0.1', port: cappedPort });
      sockets.push(second);
      second.on('error', () => {});
      await new Promise((resolve) => second.once('connect', resolve));
      const third = connect({ host: '127.0.0.1', port: cappedPort });
      sockets.push(third);
      const thirdClosed = await new Promise<string>((resolve) => {
        const chunks: Buffer[] = [];
        third.on('data', (chunk) => chunks.push(chunk));
        third.on('error', () => {});
        third.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
        third.write('GET /api/me HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
        setTimeout(() => third.destroy(), 5_000);
      });
      expect(thirdClosed).toBe('');

      const { text, ms } = await Promise.race([slowReply, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no 408 within 8 s')), 8_000))]);
      expect(text).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
      expect(ms).toBeGreaterThanOrEqual(900);
      // a timeout, not a malformed request
      expect(bodyOf(text)).toEqual({ error: 'bad_request', message: 'the request did not arrive in time' });
    } finally {
      for (const socket of sockets) socket.destroy();
      await capped.close();
    }
  }, 20_000);
});
