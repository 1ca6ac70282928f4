import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { createServiceApi } from '../../src/client/api.js';
import { NetworkError } from '../../src/client/errors.js';
import { createHttpTransport, type Transport } from '../../src/client/transport.js';
import { startFaultServer, type FaultServer } from '../helpers/fault-server.js';

/** A tiny HTTP proxy: tunnels CONNECT to 127.0.0.1 targets, refuses others (403), and records every CONNECT. */
async function startProxy(): Promise<{ url: string; connects: string[]; close(): Promise<void> }> {
  const connects: string[] = [];
  const sockets = new Set<Socket>();
  const proxy: Server = createServer((_req, res) => {
    res.writeHead(501).end('forward proxying not supported');
  });
  proxy.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  proxy.on('connect', (req, client: Socket, head: Buffer) => {
    const target = req.url ?? '';
    connects.push(target);
    const [host, port] = target.split(':');
    if (host !== '127.0.0.1') {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connects,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        proxy.close(() => resolve());
      }),
  };
}

const PROXY_VARS = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'] as const;
let savedEnv: Record<string, string | undefined>;
let server: FaultServer;
let transport: Transport | undefined;

beforeEach(async () => {
  savedEnv = Object.fromEntries(PROXY_VARS.map((name) => [name, process.env[name]]));
  for (const name of PROXY_VARS) delete process.env[name];
  server = await startFaultServer({ handler: () => ({ status: 200, body: { user_id: 'u', workspace_id: 'ws_1', org_id: 'o' } }) });
});

afterEach(async () => {
  await transport?.close?.();
  transport = undefined;
  await server.close();
  for (const name of PROXY_VARS) {
    if (savedEnv[name] === undefined) delete process.env[name];
    else process.env[name] = savedEnv[name];
  }
});

const get = (path = '/api/me') => transport!.request({ method: 'GET', path, headers: { accept: 'application/json' } });

describe('keep-alive', () => {
  it('sends several sequential requests over one connection', async () => {
    transport = createHttpTransport(server.url);
    for (let i = 0; i < 5; i++) expect((await get()).status).toBe(200);
    expect(server.count).toBe(5);
    expect(server.connections).toBe(1);
    expect(new Set(server.requests.map((request) => request.connection))).toEqual(new Set([1]));
  });

  it('keeps one connection across the API calls of a client, including the retry after 429', async () => {
    server.enqueue({ status: 429, headers: { 'retry-after': '0' }, body: { error: 'rate_limited', message: 'slow down' } });
    const api = createServiceApi({ baseUrl: server.url, apiKey: 'gk_test_key_1234' });
    try {
      await api.me();
      await api.me();
      await api.me();
    } finally {
      await api.close();
    }
    expect(server.count).toBe(4);
    expect(server.connections).toBe(1);
  });
});

describe('replies', () => {
  it('returns status, lower-case headers and the body text', async () => {
    server.enqueue({ status: 418, headers: { 'X-Request-Id': 'req-1' }, raw: 'teapot' });
    transport = createHttpTransport(server.url);
    const reply = await get();
    expect(reply.status).toBe(418);
    expect(reply.headers['x-request-id']).toBe('req-1');
    expect(reply.body).toBe('teapot');
  });

  it('times out a reply that does not come, with timedOut set', async () => {
    server.enqueue({ hang: true });
    transport = createHttpTransport(server.url, { timeoutMs: 250 });
    const started = Date.now();
    const error = await get().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).timedOut).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('times out a body that stops half way', async () => {
    server.setHandler(() => ({ status: 200, raw: '{"a":1}', delayMs: 5000 }));
    transport = createHttpTransport(server.url, { timeoutMs: 200 });
    const error = await get().catch((caught: unknown) => caught);
    expect((error as NetworkError).timedOut).toBe(true);
  });

  it('fails requests after close', async () => {
    transport = createHttpTransport(server.url);
    await transport.close!();
    const error = await get().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).code).toBe('client_closed');
  });

  it('has a 15 s default timeout (spec §8)', async () => {
    const { DEFAULT_TIMEOUT_MS } = await import('../../src/client/transport.js');
    expect(DEFAULT_TIMEOUT_MS).toBe(15_000);
  });
});

describe('proxies from the environment', () => {
  let proxy: Awaited<ReturnType<typeof startProxy>>;

  beforeEach(async () => {
    proxy = await startProxy();
  });

  afterEach(async () => {
    await proxy.close();
  });

  it('sends http:// requests through HTTP_PROXY', async () => {
    process.env.HTTP_PROXY = proxy.url;
    transport = createHttpTransport(server.url);
    expect((await get()).status).toBe(200);
    expect(proxy.connects).toEqual([`127.0.0.1:${server.port}`]);
    expect(server.count).toBe(1);
  });

  it('goes direct when NO_PROXY matches the host', async () => {
    process.env.HTTP_PROXY = proxy.url;
    process.env.NO_PROXY = 'localhost,127.0.0.1';
    transport = createHttpTransport(server.url);
    expect((await get()).status).toBe(200);
    expect(proxy.connects).toEqual([]);
    expect(server.count).toBe(1);
  });

  it('goes direct when no proxy is set', async () => {
    transport = createHttpTransport(server.url);
    await get();
    expect(proxy.connects).toEqual([]);
  });

  it('sends https:// requests through HTTPS_PROXY (a CONNECT tunnel to host:443)', async () => {
    process.env.HTTPS_PROXY = proxy.url;
    transport = createHttpTransport('https://governance.example.test');
    const error = await get().catch((caught: unknown) => caught);
    // The test proxy refuses tunnels to anything but 127.0.0.1: the request went to it and failed there.
    expect(proxy.connects).toEqual(['governance.example.test:443']);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).timedOut).toBe(false);
  });

  it('reads the lower-case https_proxy too', async () => {
    process.env.https_proxy = proxy.url;
    transport = createHttpTransport('https://governance.example.test');
    await get().catch(() => undefined);
    expect(proxy.connects).toEqual(['governance.example.test:443']);
  });
});
