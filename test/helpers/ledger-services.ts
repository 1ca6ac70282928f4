/**
 * `govctl serve` in-process on 127.0.0.1 over a new database file with a log key and a verdict
 * key beside it, integrating only
 * when a test says so (`integration: 'manual'`): the fixture of the ledger command tests. Every
 * service, directory and extra resource a test makes is stopped or removed after it.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { createMemoryIO } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import {
  createLedgerKey,
  createVerdictKey,
  ledgerKeyPath,
  provision,
  readLedgerKey,
  readVerdictKey,
  startServer,
  verdictKeyPath,
  type RunningServer,
} from '../../src/server/index.js';
import { call, wsPath } from './service-requests.js';

export interface LedgerService {
  url: string;
  apiKey: string;
  workspaceId: string;
  dbPath: string;
  server: RunningServer;
}

export interface Identity {
  api_key: string;
  workspace_id: string;
}

export interface LedgerServices {
  /** a new temporary directory, removed after the test */
  tempDir(): string;
  /** a service over `dbPath`, signing with the key in `keyFile` (default: the database's own) */
  serve(dbPath: string, identity: Identity, keyFile?: string): Promise<LedgerService>;
  /** a service over a new provisioned database with a new log key */
  newService(): Promise<LedgerService & { identity: Identity; dir: string }>;
  /** stops a service before the test ends (a restart, a rollback) */
  stop(service: LedgerService): Promise<void>;
  /** runs `close` after the test (a proxy, a server of its own) */
  onCleanup(close: () => Promise<void>): void;
  /** `govctl args` in-process against `service`, in a home directory of its own */
  govctl(
    service: Pick<LedgerService, 'url' | 'apiKey'>,
    args: string[],
    env?: Record<string, string>,
  ): Promise<{ code: number; stdout: string; stderr: string }>;
}

/** The workspace's log verifier key, as the service publishes it. */
export async function logKey(service: Pick<LedgerService, 'url' | 'apiKey' | 'workspaceId'>): Promise<string> {
  return (await call(service, 'GET', wsPath(service.workspaceId, 'ledger/key'))).text.trim();
}

/** The fixture for one test file; `prefix` names its temporary directories. */
export function ledgerServices(prefix: string): LedgerServices {
  const dirs: string[] = [];
  const running: RunningServer[] = [];
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    for (const server of running.splice(0)) await server.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  const tempDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
    dirs.push(dir);
    return dir;
  };
  const serve = async (dbPath: string, identity: Identity, keyFile = ledgerKeyPath(dbPath)): Promise<LedgerService> => {
    const verdictKeyFile = verdictKeyPath(dbPath);
    if (!existsSync(verdictKeyFile)) createVerdictKey(verdictKeyFile);
    const server = await startServer({
      host: '127.0.0.1',
      port: 0,
      db: dbPath,
      verifyWorkers: 0,
      ledger: { key: readLedgerKey(keyFile), integration: 'manual' },
      verdictKey: readVerdictKey(verdictKeyFile),
    });
    running.push(server);
    return { url: server.url, apiKey: identity.api_key, workspaceId: identity.workspace_id, dbPath, server };
  };
  return {
    tempDir,
    serve,
    async newService() {
      const dir = tempDir();
      const dbPath = join(dir, 'server.db');
      const identity = await provision(dbPath, { orgName: 'o', workspaceName: 'w' });
      createLedgerKey(ledgerKeyPath(dbPath));
      return { ...(await serve(dbPath, identity)), identity, dir };
    },
    async stop(service) {
      await service.server.close();
      running.splice(running.indexOf(service.server), 1);
    },
    onCleanup(close) {
      closers.push(close);
    },
    async govctl(service, args, env = {}) {
      const io = createMemoryIO();
      const home = tempDir();
      const code = await main(args, {
        io,
        env: {
          HOME: home,
          XDG_CONFIG_HOME: join(home, 'c'),
          XDG_DATA_HOME: join(home, 'd'),
          SERVICE_BASE_URL: service.url,
          SERVICE_API_KEY: service.apiKey,
          ...env,
        },
        cwd: home,
      });
      return { code, stdout: io.stdoutText(), stderr: io.stderrText() };
    },
  };
}
