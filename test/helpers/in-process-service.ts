/** An in-process service (createApp + inject) on a database of the test backend (helpers/backend.ts), with a clock the test moves. */
import { createApp, type ServiceApp } from '../../src/server/app.js';
import { provision } from '../../src/server/index.js';
import { testStoreLocation } from './backend.js';

export interface InProcess {
  service: ServiceApp;
  dbPath: string;
  apiKey: string;
  workspaceId: string;
  /** the service's clock, epoch ms; tests move it */
  clock: { ms: number };
  /** one request; the body object is sent as JSON */
  send(
    method: 'GET' | 'POST',
    rest: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; json: any; text: string; headers: Record<string, unknown> }>;
  /** closes and opens the service again on the same database (a restart) */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startInProcess(): Promise<InProcess> {
  const dbPath = await testStoreLocation('in-process');
  const { api_key: apiKey, workspace_id: workspaceId } = await provision(dbPath, { orgName: 'o', workspaceName: 'w' });
  const clock = { ms: Date.now() };
  const open = () => createApp({ db: dbPath, now: () => new Date(clock.ms) });
  const handle: InProcess = {
    service: await open(),
    dbPath,
    apiKey,
    workspaceId,
    clock,
    async send(method, rest, body, headers = {}) {
      const reply = await handle.service.app.inject({
        method,
        url: `/api/workspaces/${workspaceId}/governance/${rest}`,
        headers: { authorization: `Bearer ${apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
      let json: unknown;
      try {
        json = JSON.parse(reply.body);
      } catch {
        json = undefined;
      }
      return { status: reply.statusCode, json, text: reply.body, headers: reply.headers };
    },
    async restart() {
      await handle.service.close();
      handle.service = await open();
    },
    close: () => handle.service.close(),
  };
  return handle;
}
