import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.js';
import { call, countRows, evidenceRecord, wsPath } from '../helpers/service-requests.js';

/**
 * The graceful close of `govctl serve` (RunningServer.close, which its SIGINT/SIGTERM handling in
 * src/cli/serve/serve.ts calls; the signals themselves are test/cli's, through the process).
 */
describe('graceful shutdown', () => {
  it('serves the requests that reached it when it closes, and stores exactly the acknowledged writes', async () => {
    const server = await startTestServer();
    const { dbPath, workspaceId } = server;
    // Open keep-alive connections first, then send a burst of writes on them and close at once:
    // requests already on a connection are served even though the server is closing.
    await Promise.all(Array.from({ length: 50 }, () => call(server, 'GET', '/api/me')));
    const inFlight = Array.from({ length: 50 }, () =>
      call(server, 'POST', wsPath(workspaceId, 'grc/evidence'), { body: evidenceRecord() }).then(
        (reply) => reply.status,
        () => 'no reply',
      ),
    );
    await new Promise((resolve) => setImmediate(resolve));
    const closed = server.server.close();
    const outcomes = await Promise.all(inFlight);
    await closed;
    const acknowledged = outcomes.filter((outcome) => outcome === 201).length;
    expect(outcomes.every((outcome) => outcome === 201 || outcome === 'no reply')).toBe(true);
    expect(acknowledged).toBeGreaterThanOrEqual(40);
    expect(countRows(dbPath, 'evidence', workspaceId)).toBe(acknowledged);
    expect(server.server.service.app.server.listening).toBe(false);
    await server.stop();
  });
});
