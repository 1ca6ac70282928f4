/**
 * A scripted HTTP server on 127.0.0.1, port 0, for testing clients against replies a real service
 * rarely gives on demand: 429 with Retry-After, 5xx, slow replies, 401/403, malformed JSON.
 *
 * Replies come from a queue (`enqueue`), first in first out; when the queue is empty, from the
 * `handler` (default: 404 with the service's error body). Every request is recorded (method, url,
 * headers, body text, arrival time, connection number), and every TCP connection is counted.
 *
 * @example
 * const server = await startFaultServer();
 * server.enqueue({ status: 429, headers: { 'retry-after': '1' }, body: { error: 'rate_limited', message: 'slow down' } });
 * server.enqueue({ status: 200, body: { ok: true } });
 * // … point the client at server.url …
 * expect(server.requests).toHaveLength(2);
 * await server.close();
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One scripted reply. */
export interface ScriptedResponse {
  /** default 200 */
  status?: number;
  headers?: Record<string, string>;
  /** sent as JSON (content-type application/json) */
  body?: unknown;
  /** sent as is (content-type application/json unless headers say otherwise); wins over body */
  raw?: string;
  /** wait this long before replying, in ms */
  delayMs?: number;
  /** never reply (the connection stays open until the client gives up or the server closes) */
  hang?: boolean;
  /** destroy the connection without replying */
  destroy?: boolean;
  /**
   * send the head (its Content-Length counting the whole `body`) and only the first `sent`
   * characters of the body, then stall (`hang`) or close the connection (`destroy`)
   */
  partial?: { body: string; sent: number; then: 'hang' | 'destroy' };
}

/** One request as the server saw it. */
export interface RecordedRequest {
  method: string;
  /** path and query */
  url: string;
  /** lower-case names */
  headers: IncomingHttpHeaders;
  /** the body text ('' when none) */
  body: string;
  /** Date.now() when the request (headers and body) had arrived */
  receivedAt: number;
  /** 1-based number of the TCP connection it came on */
  connection: number;
}

export type FaultHandler = (request: RecordedRequest) => ScriptedResponse | Promise<ScriptedResponse>;

export interface FaultServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** queues replies for the next requests, in order */
  enqueue(...responses: ScriptedResponse[]): void;
  /** replaces the handler used when the queue is empty */
  setHandler(handler: FaultHandler): void;
  /** every request so far */
  readonly requests: RecordedRequest[];
  /** how many requests so far */
  readonly count: number;
  /** how many TCP connections were opened so far */
  readonly connections: number;
  /** the JSON bodies of the requests to paths starting with `prefix` */
  bodies(prefix?: string): unknown[];
  close(): Promise<void>;
}

const notFound: FaultHandler = () => ({ status: 404, body: { error: 'not_found', message: 'no scripted reply' } });

/** Starts a fault server; see the module comment. */
export async function startFaultServer(options: { handler?: FaultHandler } = {}): Promise<FaultServer> {
  const queue: ScriptedResponse[] = [];
  const requests: RecordedRequest[] = [];
  let handler: FaultHandler = options.handler ?? notFound;
  let connections = 0;
  const sockets = new Set<Socket>();
  const connectionNumbers = new WeakMap<Socket, number>();

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
        connection: connectionNumbers.get(req.socket) ?? 0,
      };
      requests.push(recorded);
      void (async () => {
        const scripted = queue.shift() ?? (await handler(recorded));
        if (scripted.hang) return;
        if (scripted.delayMs) await new Promise((resolve) => setTimeout(resolve, scripted.delayMs));
        if (scripted.destroy) {
          req.socket.destroy();
          return;
        }
        if (res.destroyed) return;
        if (scripted.partial) {
          const { body, sent, then } = scripted.partial;
          res.writeHead(scripted.status ?? 200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...scripted.headers });
          res.write(body.slice(0, sent), () => {
            if (then === 'destroy') req.socket.destroy();
          });
          return;
        }
        const text = scripted.raw ?? (scripted.body === undefined ? '' : JSON.stringify(scripted.body));
        res.writeHead(scripted.status ?? 200, { 'content-type': 'application/json', ...scripted.headers });
        res.end(text);
      })();
    });
  });
  server.on('connection', (socket: Socket) => {
    connections += 1;
    connectionNumbers.set(socket, connections);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    enqueue: (...responses) => void queue.push(...responses),
    setHandler: (next) => {
      handler = next;
    },
    requests,
    get count() {
      return requests.length;
    },
    get connections() {
      return connections;
    },
    bodies: (prefix = '') =>
      requests.filter((request) => request.url.startsWith(prefix) && request.body !== '').map((request) => JSON.parse(request.body) as unknown),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A handler that answers like the service for the endpoints the client uses, enough for client
 * tests: /api/me, evidence writes (echoing the type, `dry_run` aware), single and batch attestations.
 */
export function serviceLikeHandler(options: { workspaceId?: string } = {}): FaultHandler {
  const workspaceId = options.workspaceId ?? 'ws_test';
  let next = 0;
  return (request) => {
    const path = request.url.split('?')[0];
    if (request.method === 'GET' && path === '/api/me') {
      return { body: { user_id: 'usr_test', workspace_id: workspaceId, org_id: 'org_test' } };
    }
    if (request.method === 'POST' && path.endsWith('/grc/evidence')) {
      const body = JSON.parse(request.body) as { record_type: string };
      const dryRun = request.url.includes('dry_run=true');
      next += 1;
      return {
        status: dryRun ? 200 : 201,
        body: {
          record_id: dryRun ? '00000000-0000-0000-0000-000000000000' : `rec_${next}`,
          record_type: body.record_type,
          mapped_controls: ['EUAIA_ART9'],
          detail: dryRun ? 'dry_run' : 'ok',
        },
      };
    }
    if (request.method === 'POST' && path.endsWith('/attestations/external')) {
      const body = JSON.parse(request.body) as { witness_sig?: string };
      next += 1;
      return {
        status: 201,
        body: {
          attestation_id: `att_${next}`,
          external_verified: body.witness_sig !== undefined,
          trust_tier: body.witness_sig ? 'witnessed' : 'declared',
          detail: 'ok',
        },
      };
    }
    if (request.method === 'POST' && path.endsWith('/attestations/batch')) {
      const body = JSON.parse(request.body) as { records: unknown[] };
      const results = body.records.map(() => ({ status: 'accepted', attestation_id: `att_${(next += 1)}` }));
      return { body: { accepted: results.length, rejected: 0, results } };
    }
    return { status: 404, body: { error: 'not_found', message: `no route ${request.method} ${path}` } };
  };
}
