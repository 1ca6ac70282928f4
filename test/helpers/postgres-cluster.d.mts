export class PostgresMissingError extends Error {}
export function findBinDir(env?: NodeJS.ProcessEnv): string;
export function startCluster(options?: { settings?: Record<string, string | number> }): Promise<PostgresCluster>;
export class PostgresCluster {
  pid: number | null;
  port: number;
  readonly dir: string;
  readonly data: string;
  readonly logPath: string;
  url(database?: string): string;
  start(): Promise<void>;
  createDatabase(name: string): Promise<string>;
  kill(signal?: 'SIGKILL' | 'SIGQUIT' | 'SIGINT' | 'SIGTERM'): Promise<void>;
  stop(): Promise<void>;
  log(): string;
}
