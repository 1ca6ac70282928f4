/**
 * The HTTP server under the Fastify application, with what protects it from its clients
 * (docs/security.md, "Abusive clients"):
 * - backpressure: a connection's requests are answered one at a time, the next only once the
 *   previous reply has left the process and the connection's unsent output is below a bound; while
 *   requests wait, reading from the connection stops. A client that pipelines requests and never
 *   reads the replies therefore holds at most one reply in the service's memory, not one per request;
 * - caps and timeouts: connections at once, time for the headers, for the whole request, idle
 *   keep-alive, a connection with no traffic at all, requests per connection;
 * - a refused request whose body has not been read is answered with `Connection: close` and its
 *   connection closed without reading the rest (see {@link closeWithoutReadingBody});
 * - `CONNECT` (which Node hands to a separate event and otherwise just drops) gets an error body.
 *
 * Pausing a connection uses what Node's own HTTP server uses to stop reading a flood of pipelined
 * requests (`socket._paused` and the socket's parser): Node resumes such a connection once its
 * output drains, and this module pauses it again while its requests still wait.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ServiceLimits } from './limits.js';

/** What Node's HTTP server keeps on a socket and this module reads or sets. */
interface HttpSocket extends Socket {
  _paused?: boolean;
  parser?: { pause(): void; resume(): void } | null;
  [GATE]?: Gate;
}

const GATE = Symbol('govctl.gate');

interface Gate {
  /** a request of this connection is being answered */
  busy: boolean;
  /** requests waiting for their turn */
  queue: [IncomingMessage, ServerResponse][];
  /** reading was stopped here (not only by Node) */
  paused: boolean;
  /** waiting for the socket's 'drain' before the next request */
  waitingForDrain: boolean;
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** How long a connection closed with unread request bytes stays half-open for the client to read the reply. */
export const LINGER_MS = 250;

function pauseReading(socket: HttpSocket): void {
  socket._paused = true;
  socket.parser?.pause();
  socket.pause();
}

function resumeReading(socket: HttpSocket): void {
  socket._paused = false;
  socket.parser?.resume();
  socket.resume();
}

/**
 * The service's HTTP server: `handler` (Fastify's) behind the per-connection gate, with the
 * limits' caps and timeouts set.
 */
export function createGatedServer(handler: Handler, limits: ServiceLimits): Server {
  const server = createServer(
    // Node enforces the header and request timeouts when it sweeps its connections (every 30 s by
    // default): every second keeps a 10 s header timeout close to 10 s.
    { connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs) },
    (request, response) => admit(request, response),
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.maxConnections = limits.maxConnections;
  if (limits.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = limits.maxRequestsPerSocket;
  server.setTimeout(limits.idleTimeoutMs);
  server.on('connect', answerConnect);

  function admit(request: IncomingMessage, response: ServerResponse): void {
    const socket = request.socket as HttpSocket;
    let gate = socket[GATE];
    if (gate === undefined) {
      gate = { busy: false, queue: [], paused: false, waitingForDrain: false };
      socket[GATE] = gate;
      // Node resumes a connection it paused once its output drains (its listener runs first):
      // stop it again while requests still wait here.
      socket.on('drain', () => {
        if (gate!.paused) pauseReading(socket);
      });
      socket.once('close', () => {
        gate!.queue.length = 0;
      });
    }
    if (!gate.busy && gate.queue.length === 0 && socket.writableLength <= limits.maxQueuedReplyBytes) {
      dispatch(socket, gate, request, response);
      return;
    }
    gate.queue.push([request, response]);
    if (gate.queue.length >= limits.maxPipelined && !gate.paused) {
      gate.paused = true;
      pauseReading(socket);
    }
    // nothing is being answered: the wait is for the connection's output to drain
    if (!gate.busy) pump(socket, gate);
  }

  function dispatch(socket: HttpSocket, gate: Gate, request: IncomingMessage, response: ServerResponse): void {
    gate.busy = true;
    // 'close' comes once: a tick after 'finish' (the reply has left the process), or when the
    // connection is destroyed first.
    response.on('close', () => {
      gate.busy = false;
      pump(socket, gate);
    });
    handler(request, response);
  }

  function pump(socket: HttpSocket, gate: Gate): void {
    if (gate.busy || gate.queue.length === 0 || socket.destroyed) return;
    if (socket.writableLength > limits.maxQueuedReplyBytes) {
      if (!gate.waitingForDrain) {
        gate.waitingForDrain = true;
        socket.once('drain', () => {
          gate.waitingForDrain = false;
          pump(socket, gate);
        });
      }
      return;
    }
    const [request, response] = gate.queue.shift()!;
    if (gate.paused && gate.queue.length < limits.maxPipelined / 2) {
      gate.paused = false;
      if (!socket.writableNeedDrain) resumeReading(socket);
    }
    dispatch(socket, gate, request, response);
  }

  return server;
}

/** `CONNECT` is not a method of this service: an error body, then the connection closes. */
function answerConnect(_request: IncomingMessage, socket: Socket): void {
  const body = JSON.stringify({ error: 'bad_request', message: 'CONNECT is not supported: this is not a proxy' });
  socket.end(
    `HTTP/1.1 405 Method Not Allowed\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  socket.on('error', () => {});
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/**
 * Unread body bytes below which a refused request's connection is kept: reading and discarding
 * a small remainder costs less than a new connection.
 */
export const DISCARD_AT_MOST = 64 * 1024;

/**
 * For a reply sent before the request's body has been read (a refusal: 401, 404, 413, 429, …)
 * when more than {@link DISCARD_AT_MOST} bytes of it are still to come (or its length is not
 * announced): marks the reply `Connection: close` and, once it is sent, stops reading the
 * connection and closes it, so the rest of the body (whatever its announced length) is never
 * read. The connection is half-closed first and destroyed after {@link LINGER_MS}, so that the
 * client can read the reply before the unread bytes make the kernel reset the connection.
 *
 * @returns whether the connection will close unread
 */
export function closeWithoutReadingBody(request: IncomingMessage, response: ServerResponse): boolean {
  if (request.complete || request.readableEnded) return false;
  const length = request.headers['content-length'];
  if (length === undefined && request.headers['transfer-encoding'] === undefined) return false;
  if (length !== undefined && Number(length) - request.readableLength <= DISCARD_AT_MOST) return false;
  if (!response.headersSent) response.setHeader('connection', 'close');
  const socket = request.socket as HttpSocket;
  // Node ends the connection after a `Connection: close` reply, but first reads and discards the
  // unread body (`destroySoon` waits for the end of it); this replaces that end for this socket.
  socket.destroySoon = () => {
    pauseReading(socket);
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
  return true;
}
