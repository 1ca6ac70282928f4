/**
 * The HTTP transport (src/client/transport.ts) on real sockets against a scripted server on
 * 127.0.0.1 (test/helpers/fault-server.ts): one table of reply, keep-alive, timeout, stall and
 * close cases run against both ways of carrying an exchange (direct, and through a proxy), then
 * how proxies are found in the environment.
 */
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

/**
 * The two ways a transport carries an exchange (src/client/transport.ts): node:http directly, and
 * undici through a proxy (a CONNECT tunnel). The proxy settings are given as options, so the
 * process's environment plays no part; `proxied` says whether the proxy saw the connection.
 */
interface Way {
  name: string;
  open(url: string, options?: { timeoutMs?: number }): Promise<Transport>;
  proxied(): boolean;
}

let proxyForWays: Awaited<ReturnType<typeof startProxy>> | undefined;
afterEach(async () => {
  await proxyForWays?.close();
  proxyForWays = undefined;
});

const WAYS: Way[] = [
  {
    name: 'direct (node:http)',
    open: async (url, options = {}) => createHttpTransport(url, { ...options, proxy: { httpProxy: '', httpsProxy: '', noProxy: '' } }),
    proxied: () => false,
  },
  {
    name: 'through a proxy (undici)',
    async open(url, options = {}) {
      proxyForWays = await startProxy();
      return createHttpTransport(url, { ...options, proxy: { httpProxy: proxyForWays.url, httpsProxy: proxyForWays.url, noProxy: '' } });
    },
    proxied: () => (proxyForWays?.connects.length ?? 0) > 0,
  },
];

// One table of cases, run against both ways: a reply, keep-alive, a reply that never comes, a body
// that stalls half way, a connection closed before or in the middle of a reply, and a closed
// transport. Timeouts are the transport's own timer on a real socket (short, bounded).
describe.each(WAYS)('$name', (way) => {
  it('returns status, lower-case headers and the body text', async () => {
    server.enqueue({ status: 418, headers: { 'X-Request-Id': 'req-1' }, raw: 'teapot' });
    transport = await way.open(server.url);
    const reply = await get();
    expect(reply).toMatchObject({ status: 418, body: 'teapot' });
    expect(reply.headers['x-request-id']).toBe('req-1');
    expect(way.proxied()).toBe(way.name.startsWith('through'));
  });

  it('sends several sequential requests over one connection', async () => {
    transport = await way.open(server.url);
    for (let i = 0; i < 5; i++) expect((await get()).status).toBe(200);
    expect(server.count).toBe(5);
    expect(server.connections).toBe(1);
  });

  it('times out a reply that does not come, with timedOut set', async () => {
    server.enqueue({ hang: true });
    transport = await way.open(server.url, { timeoutMs: 250 });
    const started = Date.now();
    const error = await get().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).timedOut).toBe(true);
    expect((error as NetworkError).code).toBe('timeout');
    // Not before its time (a lower bound only: a loaded machine is late, never early).
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
  });

  it('times out a body that stalls half way, with timedOut set', async () => {
    server.enqueue({ partial: { body: '{"user_id":"u","workspace_id":"ws_1"}', sent: 10, then: 'hang' } });
    transport = await way.open(server.url, { timeoutMs: 250 });
    const error = await get().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).timedOut).toBe(true);
  });

  it('fails, not timed out, when the connection closes before a reply', async () => {
    server.enqueue({ destroy: true });
    transport = await way.open(server.url, { timeoutMs: 10_000 });
    const error = await get().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).timedOut).toBe(false);
    expect((error as NetworkError).code).toBe('network_error');
  });

  it('fails, not timed out, when the connection closes in the middle of the body', async () => {
    server.enqueue({ partial: { body: '{"user_id":"u","workspace_id":"ws_1"}', sent: 10, then: 'destroy' } });
    transport = await way.open(server.url, { timeoutMs: 10_000 });
    const error = await get().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).timedOut).toBe(false);
  });

  it('fails requests after close', async () => {
    transport = await way.open(server.url);
    await transport.close!();
    const error = await get().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).code).toBe('client_closed');
  });
});

describe('keep-alive across a client', () => {
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

  it('has a 15 s default timeout (docs/library.md "Settings")', async () => {
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
