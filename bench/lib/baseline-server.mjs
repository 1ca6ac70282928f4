// @ts-check
/**
 * The baseline: a bare node:http server, run as a child process (startChild). It reads a JSON
 * POST body, JSON.parses it and answers a small JSON (201, as the service does for a write); a GET
 * gets the same small JSON. No framework, no validation, no storage: the cost of HTTP + JSON on
 * this machine, which the service's rates are compared with.
 *
 * IPC: sends `{ type: 'ready', url, pid }` once listening on 127.0.0.1 (an ephemeral port).
 * Stops on SIGTERM or when the parent goes away.
 */
import { createServer } from 'node:http';

const ANSWER = JSON.stringify({ record_id: 'rec_00000000000000000000000000', detail: 'ok' });

const server = createServer((request, response) => {
  /** @type {Buffer[]} */
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    let status = request.method === 'POST' ? 201 : 200;
    let body = ANSWER;
    if (request.method === 'POST') {
      try {
        const value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (value === null || typeof value !== 'object') throw new Error('not an object');
      } catch {
        status = 400;
        body = '{"error":"bad_request"}';
      }
    }
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  });
});
server.keepAliveTimeout = 60_000;

server.listen(0, '127.0.0.1', () => {
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.send?.({ type: 'ready', url: `http://127.0.0.1:${port}`, pid: process.pid });
});

const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('disconnect', stop);
