/**
 * A real service for tests: createApp listening on 127.0.0.1 port 0 over a real database of the
 * test backend (a SQLite file in a temporary directory, or a fresh PostgreSQL database:
 * helpers/backend.ts), provisioned with `provision` (docs/architecture.md, "Test helpers").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { provision, startServer, type LogLine, type RunningServer } from '../../src/server/index.js';
import { testBackend, testStoreLocation } from './backend.js';

export { testBackend };

export interface TestServerOptions {
  /** an existing database file (default: a new one in a temporary directory) */
  dbPath?: string;
  /** requests per minute per workspace (default 2000) */
  rateLimitPerMinute?: number;
  /** the service clock */
  now?: () => Date;
  /** the request and record budgets' clock, epoch ms (default Date.now) */
  budgetNowMs?: () => number;
  logLine?: LogLine;
}

export interface TestServer {
  /** e.g. `http://127.0.0.1:53211` */
  url: string;
  apiKey: string;
  workspaceId: string;
  orgId: string;
  userId: string;
  dbPath: string;
  server: RunningServer;
  /** stops the server and removes the temporary directory it made */
  stop(): Promise<void>;
}

/** Starts a provisioned service on 127.0.0.1 with a real database (a file, or PostgreSQL: helpers/backend.ts). */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const postgres = options.dbPath === undefined && testBackend() === 'postgres';
  const tempDir = options.dbPath === undefined && !postgres ? mkdtempSync(join(tmpdir(), 'govctl-server-')) : undefined;
  const dbPath = options.dbPath ?? (await testStoreLocation('server', tempDir));
  const identity = await provision(dbPath, { orgName: 'test', workspaceName: 'test', userEmail: 'tester@example.com' });
  const server = await startServer({
    host: '127.0.0.1',
    port: 0,
    db: dbPath,
    ...(options.rateLimitPerMinute !== undefined ? { rateLimitPerMinute: options.rateLimitPerMinute } : {}),
    ...(options.now !== undefined ? { now: options.now } : {}),
    ...(options.budgetNowMs !== undefined ? { budgetNowMs: options.budgetNowMs } : {}),
    ...(options.logLine !== undefined ? { logLine: options.logLine } : {}),
  });
  return {
    url: server.url,
    apiKey: identity.api_key,
    workspaceId: identity.workspace_id,
    orgId: identity.org_id,
    userId: identity.user_id,
    dbPath,
    server,
    async stop() {
      await server.close();
      if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    },
  };
}

/** Another organisation and workspace, with its own key, in the same database. */
export async function provisionWorkspace(dbPath: string): Promise<{ apiKey: string; workspaceId: string; orgId: string; userId: string }> {
  const identity = await provision(dbPath, { orgName: 'other', workspaceName: 'other' });
  return { apiKey: identity.api_key, workspaceId: identity.workspace_id, orgId: identity.org_id, userId: identity.user_id };
}
