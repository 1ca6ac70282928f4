import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.js';
import { call, countRows, evidenceRecord, wsPath } from '../helpers/service-requests.js';

/**
 * The graceful close of `govctl serve` (RunningServer.close, which its SIGINT/SIGTERM handling in
 * src/cli/serve/serve.ts calls; the signals themselves are test/cli's, through the process).
 */
describe('graceful shutdown', () => {
  it('serves every request that reached it before it closed, and stores exactly those writes', async () => {
    const server = await startTestServer();
    const { dbPath, workspaceId } = server;
    // Open keep-alive connections first, then send a burst of writes on them and close once every
    // one has reached the server (its 'request' event: headers read, the body maybe not yet):
    // requests already on a connection are served even though the server is closing.
    await Promise.all(Array.from({ length: 50 }, () => call(server, 'GET', '/api/me')));
    const httpServer = server.server.service.app.server;
    let received = 0;
    const allReceived = new Promise<void>((resolve) => {
      httpServer.on('request', () => {
        received += 1;
        if (received === 50) resolve();
      });
    });
    const inFlight = Array.from({ length: 50 }, () =>
      call(server, 'POST', wsPath(workspaceId, 'grc/evidence'), { body: evidenceRecord() }).then(
        (reply) => reply.status,
        () => 'no reply',
      ),
    );
    await allReceived;
    const closed = server.server.close();
    const outcomes = await Promise.all(inFlight);
    await closed;
    const acknowledged = outcomes.filter((outcome) => outcome === 201).length;
    expect(outcomes).toEqual(Array.from({ length: 50 }, () => 201));
    expect(countRows(dbPath, 'evidence', workspaceId)).toBe(acknowledged);
    expect(server.server.service.app.server.listening).toBe(false);
    await server.stop();
  });
});
