/**
 * `govctl mcp` against a scripted service on 127.0.0.1 that misbehaves on purpose: text with
 * terminal control sequences in its error messages, and rate limiting. The MCP server runs
 * in-process, linked in memory to the SDK's own client; nothing waits on the wall clock (the
 * client's waits before a retry go through an injected sleep that records them).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { MCP_RATE_LIMIT_WAIT_MS } from '../../src/cli/mcp/server.js';
import { connectMcpInProcess } from '../helpers/mcp.js';

const API_KEY = 'gk_hostile_service_key_4711';
const servers: Server[] = [];

afterAll(async () => {
  for (const server of servers.splice(0)) await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** `govctl mcp` in this process over the scripted service at `baseUrl`. */
const connectInProcess = (baseUrl: string, sleep?: (ms: number) => Promise<void>) =>
  connectMcpInProcess({ SERVICE_BASE_URL: baseUrl, SERVICE_API_KEY: API_KEY, SERVICE_SYSTEM_NAME: 'hostile' }, sleep ? { sleep } : {});

/** A scripted service on 127.0.0.1: `/api/me` answers who the key is; every other request goes to `answer`. */
async function scriptedService(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    if (req.url === '/api/me') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ user_id: 'usr_1', workspace_id: 'ws_1', org_id: 'org_1' }));
      return;
    }
    answer(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** C0 and C1 controls and the bidi controls a terminal or a reader would act on. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('govctl mcp with a service whose text holds terminal control sequences', () => {
  it('shows them as visible escapes in tool errors and resource errors, as the CLI shows errors', async () => {
    const hostile = 'boom \u001b]0;pwned\u0007 \u001b[2J\u009b31m \u202eevil';
    const url = await scriptedService((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'server_error', message: hostile }));
    });
    const mcp = await connectInProcess(url);
    try {
      const result = await mcp.call('get_posture');
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: 'server_error' });
      for (const text of [result.content[0].text, String(result.structuredContent!.message)]) {
        expect(text).not.toMatch(UNSAFE);
        // Still there for a reader, as escapes.
        expect(text).toContain('boom \\x1b]0;pwned\\x07 \\x1b[2J\\x9b31m \\u202eevil');
      }
      const read = await mcp.client.readResource({ uri: 'govctl://posture' }).then(
        () => 'read',
        (error: Error) => error.message,
      );
      expect(read).toContain('boom \\x1b]0;pwned\\x07');
      expect(read).not.toMatch(UNSAFE);
    } finally {
      await mcp.close();
    }
  });
});

describe('govctl mcp with a service that rate-limits', () => {
  it('waits for Retry-After no longer than a host waits for a call, then answers with a rate_limited tool error that says how long to wait', async () => {
    let asked = 0;
    const url = await scriptedService((_req, res) => {
      asked += 1;
      res
        .writeHead(429, { 'content-type': 'application/json', 'retry-after': '60' })
        .end(JSON.stringify({ error: 'rate_limited', message: 'request budget spent' }));
    });
    const waits: number[] = [];
    const mcp = await connectInProcess(url, async (ms) => {
      waits.push(ms);
    });
    try {
      const result = await mcp.call('get_posture');
      // The service asked for 60 s; the SDK client gives up on a call after 60 s.
      expect(waits).toEqual([MCP_RATE_LIMIT_WAIT_MS]);
      expect(MCP_RATE_LIMIT_WAIT_MS).toBeLessThanOrEqual(10_000);
      expect(asked).toBe(2);
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: 'rate_limited', hint: expect.stringMatching(/^wait 60 s/) });
    } finally {
      await mcp.close();
    }
  });
});

describe('govctl mcp with a call the host cancels', () => {
  it("stops the call's request to the service: the connection is closed, not left waiting for the service", async () => {
    let arrived!: () => void;
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    let closedEarly!: () => void;
    const requestClosed = new Promise<void>((resolve) => (closedEarly = resolve));
    // a service that never answers the posture request: only the client can end it
    const url = await scriptedService((req) => {
      req.socket.once('close', () => closedEarly());
      arrived();
    });
    // The client's own timeout at its longest (an hour): only the cancellation can end the request
    // within the test's time.
    const mcp = await connectMcpInProcess({ SERVICE_BASE_URL: url, SERVICE_API_KEY: API_KEY, SERVICE_SYSTEM_NAME: 'hostile', GOVCTL_TIMEOUT: '60m' });
    try {
      const controller = new AbortController();
      const call = mcp.client.callTool({ name: 'get_posture', arguments: {} }, undefined, { signal: controller.signal });
      call.catch(() => undefined); // the SDK rejects the cancelled call on the client's side
      await requestArrived;
      controller.abort(new Error('the user stopped it'));
      await expect(call).rejects.toThrow();
      // the server heard notifications/cancelled and aborted the request it had in flight
      await requestClosed;
    } finally {
      await mcp.close();
    }
  });
});
