/**
 * A throw-away PostgreSQL cluster for tests and benchmarks (plain JavaScript, so that bench/ can
 * start the same cluster the tests do). The cluster lives in a fresh temporary directory, listens
 * on 127.0.0.1 only (its Unix socket in that directory), keeps `fsync` and `synchronous_commit` on
 * (durability is part of what the tests prove), and is stopped by its postmaster's pid, the
 * directory removed afterwards.
 *
 * PostgreSQL refuses to run as root; tests run as root in CI containers, so as root every server
 * binary runs as an unprivileged user (`postgres`, or GOVCTL_PG_USER) through setpriv, which execs
 * without forking: the pid we start is the postmaster's. As any other user they run as that user.
 *
 * Where the binaries are missing this throws, naming what to install: a PostgreSQL test that
 * does not run has not passed.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where Debian and Ubuntu's postgresql-15 package puts the server binaries. */
const DEFAULT_BIN_DIRS = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'];

export class PostgresMissingError extends Error {
  name = 'PostgresMissingError';
}

/** The directory holding initdb and postgres: GOVCTL_PG_BIN, else the first packaged one found. */
export function findBinDir(env = process.env) {
  const candidates = env.GOVCTL_PG_BIN ? [env.GOVCTL_PG_BIN] : DEFAULT_BIN_DIRS;
  for (const dir of candidates) {
    if (existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres'))) return dir;
  }
  throw new PostgresMissingError(
    `PostgreSQL server binaries (initdb, postgres) not found in ${candidates.join(', ')}. ` +
      'The PostgreSQL tests need them: install PostgreSQL 15 or later (Debian/Ubuntu: `apt-get install postgresql-15`), ' +
      'or set GOVCTL_PG_BIN to the directory that holds initdb and postgres.',
  );
}

/** The uid/gid the server runs as: ourselves, or (as root) the unprivileged user GOVCTL_PG_USER / postgres. */
function serverUser(env = process.env) {
  if (process.getuid?.() !== 0) return null;
  const name = env.GOVCTL_PG_USER ?? 'postgres';
  let uid;
  let gid;
  try {
    uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
    gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
  } catch {
    throw new PostgresMissingError(
      `running as root, the PostgreSQL tests start the server as the unprivileged user "${name}", which does not exist: ` +
        'create it (`useradd --system postgres`; the postgresql package does) or set GOVCTL_PG_USER to another unprivileged user.',
    );
  }
  return { name, uid, gid };
}

/** argv that runs `binary args…` as the server user. */
function asServerUser(user, binary, args) {
  if (user === null) return [binary, args];
  return ['setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--init-groups', '--', binary, ...args]];
}

/** A port the system gives on 127.0.0.1 (released again: postgres cannot take a socket; a clash is retried). */
async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a process exists (one of another user's counts: EPERM). */
export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** The pids of a process's children (from /proc, through pgrep). */
function childrenOf(pid) {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * Runs initdb into `data` (as the server user), or throws with its output.
 */
function initdb(bin, user, data) {
  const [initCmd, initArgs] = asServerUser(user, join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
  try {
    // --no-sync: initdb's own files are not synced (a crash of the machine loses a throw-away
    // cluster anyway); the server started on them syncs every commit (fsync = on).
    execFileSync(initCmd, initArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    throw new Error(`initdb failed: ${error.stderr?.toString() ?? error.message}`);
  }
}

/**
 * A data directory fresh from initdb that no server ever runs on, for {@link startCluster}'s
 * `pristine`: copying it (about 0.04 s of CPU) instead of running initdb again (0.6–1 s) is what
 * a test run's private clusters start from. Removed with `remove()`.
 * @returns {{ data: string, remove(): void }}
 */
export function makePristineDataDirectory() {
  const bin = findBinDir();
  const user = serverUser();
  const { dir, data } = dataDirectory('govctl-pg-pristine-', user, (target) => initdb(bin, user, target));
  return { data, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A new temporary directory owned by the server's user, with `data` inside it filled by `fill`
 * (initdb, or a copy of a pristine one); the directory is removed if `fill` throws.
 * @returns {{ dir: string, data: string }}
 */
function dataDirectory(prefix, user, fill) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (user !== null) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  try {
    fill(data);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return { dir, data };
}

/**
 * Starts a cluster. `settings` are extra `-c` settings; `pristine`, a data directory from
 * {@link makePristineDataDirectory}, is copied (owner and modes kept) instead of running initdb.
 * @returns {Promise<PostgresCluster>}
 */
export async function startCluster({ settings = {}, pristine = undefined } = {}) {
  const bin = findBinDir();
  const user = serverUser();
  const { dir, data } = dataDirectory('govctl-pg-', user, (target) => {
    if (pristine !== undefined) execFileSync('cp', ['-a', pristine, target], { stdio: ['ignore', 'ignore', 'pipe'] });
    else initdb(bin, user, target);
  });
  const cluster = new PostgresCluster(bin, user, dir, data, settings);
  try {
    await cluster.start();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return cluster;
}

/**
 * Starts the watchdog that stops the server at `pid` if this process ends without stopping it
 * (postgres-watchdog.mjs): detached, so that it outlives a killed test run or benchmark.
 */
function watch(pid) {
  const watchdog = spawn(process.execPath, [fileURLToPath(new URL('./postgres-watchdog.mjs', import.meta.url)), String(process.pid), String(pid)], {
    stdio: 'ignore',
    detached: true,
  });
  watchdog.unref();
}

export class PostgresCluster {
  /** @type {number | null} */
  pid = null;
  /** @type {number} */
  port = 0;
  #exited = null;

  constructor(bin, user, dir, data, settings) {
    this.bin = bin;
    this.user = user;
    this.dir = dir;
    this.data = data;
    this.settings = settings;
    this.logPath = join(dir, 'server.log');
  }

  /** A connection URL for `database` (default `postgres`), as the superuser `postgres`. */
  url(database = 'postgres') {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /**
   * Starts the postmaster on the data directory (again, after {@link kill}: crash recovery runs).
   * Keeps the port it had, so that URLs handed out stay valid.
   */
  async start() {
    for (let attempt = 0; ; attempt++) {
      if (this.port === 0 || attempt > 0) this.port = await freePort();
      const args = [
        '-D',
        this.data,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        `port=${this.port}`,
        '-c',
        `unix_socket_directories=${this.dir}`,
        // durability is part of the contract the tests check: never turned off here
        '-c',
        'fsync=on',
        '-c',
        'synchronous_commit=on',
        '-c',
        'max_connections=200',
        '-c',
        'shared_buffers=32MB',
        ...Object.entries(this.settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
      ];
      const [cmd, argv] = asServerUser(this.user, join(this.bin, 'postgres'), args);
      const logStart = existsSync(this.logPath) ? statSync(this.logPath).size : 0;
      const logFd = openSync(this.logPath, 'a');
      // Detached: a Ctrl-C of the test run's terminal reaches the test runner, which stops the
      // server in its teardown, not the server directly. Its log goes to a file.
      const child = spawn(cmd, argv, { stdio: ['ignore', logFd, logFd], detached: true });
      closeSync(logFd);
      const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
      const ready = await this.#waitReady(exited);
      const log = () => readFileSync(this.logPath, 'utf8').slice(logStart);
      if (ready === true) {
        this.#exited = exited;
        this.pid = child.pid;
        watch(child.pid);
        return;
      }
      if (ready === 'timeout') {
        for (const target of [child.pid, ...childrenOf(child.pid)]) {
          try {
            process.kill(target, 'SIGKILL');
          } catch {
            // gone
          }
        }
      }
      // Another process took the port between freePort and the bind: try another port.
      if (/could not bind|Address already in use/.test(log()) && attempt < 5) continue;
      throw new Error(`postgres did not start (${JSON.stringify(ready)}):\n${log().slice(-4000)}`);
    }
  }

  /** Resolves true once pg_isready answers, or the exit status when the postmaster ended first. */
  async #waitReady(exited) {
    let done = null;
    exited.then((status) => (done = status));
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (done !== null) return done;
      try {
        execFileSync(join(this.bin, 'pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(this.port), '-t', '1'], { stdio: 'ignore' });
        return true;
      } catch {
        await sleep(25);
      }
    }
    return 'timeout';
  }

  /** Creates an empty database `name` and returns its URL. */
  async createDatabase(name) {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: this.url() });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE ${name}`);
    } finally {
      await client.end();
    }
    return this.url(name);
  }

  /**
   * Ends the server by its pid. `SIGKILL` is a crash: the postmaster and every backend and
   * auxiliary process killed at once, as a power cut would; `SIGQUIT` an immediate shutdown;
   * `SIGINT` a fast one. Resolves once the postmaster and all its children have exited.
   */
  async kill(signal = 'SIGQUIT') {
    const pid = this.pid;
    if (pid === null) return;
    // Each child calls setsid(), so they are found by parent, not by process group.
    const children = childrenOf(pid);
    for (const target of signal === 'SIGKILL' ? [pid, ...children] : [pid]) {
      try {
        process.kill(target, signal);
      } catch {
        // already gone
      }
    }
    await this.#exited;
    this.pid = null;
    // Children exit when they notice the postmaster has gone; whatever is left goes now.
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && children.some(alive)) await sleep(20);
    for (const child of children) {
      try {
        process.kill(child, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }

  /** Stops the server (immediate: nothing to keep) and removes its directory. */
  async stop() {
    await this.kill('SIGQUIT');
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** The server's log so far (for failure messages). */
  log() {
    try {
      return readFileSync(this.logPath, 'utf8');
    } catch {
      return '';
    }
  }
}
