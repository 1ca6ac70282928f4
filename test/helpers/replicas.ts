/**
 * Real `govctl serve` replicas for the replica tests: `node bin/govctl.js serve --db <postgres URL>
 * --log-key FILE --port 0` spawned as a user runs it, on 127.0.0.1, in a clean environment. A
 * replica is ready when its listening line arrives on stderr (bounded); its stderr is kept for
 * failure messages. Replicas are ended by their own pid: SIGKILL (a crash) or SIGTERM (a stop).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { BIN, cleanEnv, codeCacheEnv, makeHome } from './cli.js';

export interface Replica {
  /** e.g. `http://127.0.0.1:41234` */
  url: string;
  pid: number;
  /** what the process wrote on stderr so far (the last 20 000 characters) */
  log(): string;
  /** whether the process has exited */
  exited(): boolean;
  /** SIGKILL: the replica dies at once, in-flight requests unanswered; resolves when it has exited */
  kill(): Promise<void>;
  /** SIGTERM (the graceful shutdown), SIGKILL after `graceMs`; resolves when it has exited */
  stop(graceMs?: number): Promise<void>;
}

/** Starts one replica and resolves once it listens (within `timeoutMs`). */
export async function startReplica(db: string, logKey: string, extraArgs: string[] = [], timeoutMs = 30_000): Promise<Replica> {
  const child: ChildProcess = spawn(process.execPath, [BIN, 'serve', '--db', db, '--log-key', logKey, '--port', '0', ...extraArgs], {
    env: cleanEnv(makeHome(), { ...codeCacheEnv(), NO_COLOR: '1' }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let text = '';
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`govctl serve did not listen within ${timeoutMs} ms:\n${text}`)), timeoutMs);
    child.stderr!.on('data', (chunk: Buffer) => {
      text = (text + chunk.toString('utf8')).slice(-20_000);
      const match = /govctl: listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exit.then(() => {
      clearTimeout(timer);
      reject(new Error(`govctl serve exited (${child.signalCode ?? child.exitCode}) before listening:\n${text}`));
    });
  }).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  const ended = () => child.exitCode !== null || child.signalCode !== null;
  return {
    url,
    pid: child.pid!,
    log: () => text,
    exited: ended,
    async kill() {
      if (!ended()) child.kill('SIGKILL');
      await exit;
    },
    async stop(graceMs = 10_000) {
      if (ended()) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      child.kill('SIGTERM');
      await exit;
      clearTimeout(timer);
    },
  };
}
