export class PostgresMissingError extends Error {}
/** whether a process with this id exists */
export function alive(pid: number): boolean;
export function findBinDir(env?: NodeJS.ProcessEnv): string;
export function makePristineDataDirectory(): { data: string; remove(): void };
export function startCluster(options?: { settings?: Record<string, string | number>; pristine?: string | undefined }): Promise<PostgresCluster>;
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
