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
 * Reading stops with `socket.pause()`, which Node's HTTP server honours by no longer reading from
 * the connection. Node itself resumes a connection now and then (once its own pipelining buffer
 * drains, or when a request's body is read): a 'resume' listener pauses it again while this module
 * holds it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ServiceLimits } from './limits.js';

interface GatedSocket extends Socket {
  [GATE]?: Gate;
  [HELD]?: boolean;
}

const GATE = Symbol('govctl.gate');
/** set while this module keeps the connection from being read */
const HELD = Symbol('govctl.held');

interface Gate {
  /** a request of this connection is being answered */
  busy: boolean;
  /** requests waiting for their turn */
  queue: [IncomingMessage, ServerResponse][];
  /** waiting for the socket's 'drain' before the next request */
  waitingForDrain: boolean;
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** Stops reading `socket` until {@link releaseReading}, whoever resumes it meanwhile. */
function holdReading(socket: GatedSocket): void {
  if (socket[HELD] === undefined) {
    // runs after Node's own listener, which starts reading again
    socket.on('resume', () => {
      if (socket[HELD]) socket.pause();
    });
  }
  socket[HELD] = true;
  socket.pause();
}

function releaseReading(socket: GatedSocket): void {
  socket[HELD] = false;
  socket.resume();
}

/**
 * Requests waiting on one connection, as a multiple of `maxPipelined`, at which the connection is
 * closed. Reading stops well before that, but the requests of one read from the socket are all
 * parsed at once, and Node may resume reading in a way `socket.pause()` cannot undo at once (a
 * resume already scheduled when the pause came): the cap is what bounds the queue whatever Node does.
 */
export const PIPELINED_CLOSE_FACTOR = 4;

/** How long a connection closed with unread request bytes stays half-open for the client to read the reply. */
export const LINGER_MS = 250;

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
    const socket = request.socket as GatedSocket;
    let gate = socket[GATE];
    if (gate === undefined) {
      gate = { busy: false, queue: [], waitingForDrain: false };
      socket[GATE] = gate;
      socket.once('close', () => {
        gate!.queue.length = 0;
      });
    }
    if (!gate.busy && gate.queue.length === 0 && socket.writableLength <= limits.maxQueuedReplyBytes) {
      dispatch(socket, gate, request, response);
      return;
    }
    gate.queue.push([request, response]);
    if (gate.queue.length > limits.maxPipelined * PIPELINED_CLOSE_FACTOR) {
      socket.destroy();
      return;
    }
    if (gate.queue.length >= limits.maxPipelined) holdReading(socket);
    // nothing is being answered: the wait is for the connection's output to drain
    if (!gate.busy) pump(socket, gate);
  }

  function dispatch(socket: GatedSocket, gate: Gate, request: IncomingMessage, response: ServerResponse): void {
    gate.busy = true;
    // 'close' comes once: a tick after 'finish' (the reply has left the process), or when the
    // connection is destroyed first.
    response.on('close', () => {
      gate.busy = false;
      pump(socket, gate);
    });
    handler(request, response);
  }

  function pump(socket: GatedSocket, gate: Gate): void {
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
    if (socket[HELD] && gate.queue.length < limits.maxPipelined / 2) releaseReading(socket);
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
  const socket = request.socket as GatedSocket;
  // Node ends the connection after a `Connection: close` reply, but first reads and discards the
  // unread body (`destroySoon` waits for the end of it); this replaces that end for this socket.
  socket.destroySoon = () => {
    holdReading(socket);
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
  return true;
}
