/**
 * Runs the command line for tests (docs/architecture.md, "Tests"), in a clean environment: nothing
 * of the developer's environment leaks in (no SERVICE_*, GOVCTL_*, CI, NO_COLOR or FORCE_COLOR
 * unless a test gives them), and HOME and the XDG directories point into a temporary directory.
 *
 * - {@link runCli}: in-process, `main(argv, {io, env, cwd})` with memory streams (~5 ms a run).
 *   What most tests use: parsing, settings, requests, rendering, exit codes.
 * - {@link runProcess}: `node bin/govctl.js …` as a user runs it (~100 ms a run), for what only a
 *   process shows: the entry point, signals, a reader that closes the pipe, output through a real
 *   pipe, exit flushing, start-up caching.
 * - {@link runShell}: a bash pipeline around the process (`| head -1`).
 */
import { execSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = join(REPO, 'bin', 'govctl.js');
const BUNDLE = join(REPO, 'dist', 'cli', 'main.js');

export interface CliResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export interface RunCliOptions {
  /** extra environment variables (the environment is otherwise clean) */
  env?: Record<string, string | undefined>;
  /** what stdin holds (default: nothing: an empty stream in-process, /dev/null for a process) */
  input?: string | Buffer;
  /** working directory (default: the home directory) */
  cwd?: string;
  /** home directory, with XDG_CONFIG_HOME and XDG_DATA_HOME inside it (default: a new temporary one) */
  home?: string;
  /** milliseconds before the process is killed (default 30 000; runProcess and runShell only) */
  timeout?: number;
  /** the client's wait before a retry, instead of a timer (runCli only) */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * keep the process's V8 code cache in `home`/.cache, as a user's is (runProcess and runShell
   * only; default: the worker's shared cache, {@link codeCacheEnv}) — for tests of the cache itself
   */
  codeCacheInHome?: boolean;
}

/** A new temporary directory in the run's TMPDIR, removed with it when the run ends (test/global-setup.ts). */
export function makeTempDir(prefix = 'govctl-cli-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A count as a regular expression's source that matches it as the summaries print it, with or without thousands separators. */
export function countPattern(n: number): string {
  return n.toLocaleString('en-US').replace(/,/g, ',?');
}

/** A home directory for one test: `config/` and `data/` inside it serve as the XDG directories. */
export function makeHome(): string {
  const home = makeTempDir('govctl-home-');
  mkdirSync(join(home, 'config'), { recursive: true });
  mkdirSync(join(home, 'data'), { recursive: true });
  return home;
}

let sharedCache: string | undefined;

/**
 * `XDG_CACHE_HOME` for spawned runs: one directory for every process this test worker spawns,
 * where bin/govctl.js keeps Node's compile cache (Node 22.1 and later), as a user's ~/.cache is kept
 * between runs. Without it every spawned run compiled the command line (and `serve` the service)
 * from source and wrote a cache no run read again. runProcess, runShell and the pseudo-terminal use it even when the test
 * gives a home, unless the test asks for `codeCacheInHome` (startup.test.ts tests the cache itself
 * in the run's home).
 */
export function codeCacheEnv(): Record<string, string> {
  sharedCache ??= makeTempDir('govctl-code-cache-');
  return { XDG_CACHE_HOME: sharedCache };
}

/** The clean environment of a run in `home`. */
export function cleanEnv(home: string, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_DATA_HOME: join(home, 'data'),
    LANG: 'C.UTF-8',
  };
  for (const [name, value] of Object.entries(extra)) if (value !== undefined) env[name] = value;
  return env;
}

/**
 * Runs `govctl args…` in-process and returns what it printed and its exit code (never throws on
 * failure): memory streams (not terminals), the clean environment, `cwd`, and `input` as stdin.
 * Process handlers are not installed (main installs them only on the process's own streams); the
 * run closes what it opened (connections, the embedded store) before it resolves.
 */
export async function runCli(args: readonly string[], options: RunCliOptions = {}): Promise<CliResult> {
  // Loaded on first use: files that only spawn do not pay for compiling the command line.
  const [{ createMemoryIO }, { main }] = await Promise.all([import('../../src/cli/io.js'), import('../../src/cli/main.js')]);
  const home = options.home ?? makeHome();
  const env = cleanEnv(home, options.env);
  const io = createMemoryIO({ env, ...(options.input !== undefined ? { stdin: options.input } : {}) });
  const exitCode = await main(args, { io, env, cwd: options.cwd ?? home, ...(options.sleep ? { sleep: options.sleep } : {}) });
  return { stdout: io.stdoutText(), stderr: io.stderrText(), exitCode };
}

/** Runs `node bin/govctl.js args…` as a process and returns what it printed and its exit code (never throws on failure). */
export async function runProcess(args: readonly string[], options: RunCliOptions = {}): Promise<CliResult> {
  const home = options.home ?? makeHome();
  const result = await execa(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? home,
    env: cleanEnv(home, { ...(options.codeCacheInHome ? {} : codeCacheEnv()), ...options.env }),
    extendEnv: false,
    reject: false,
    stripFinalNewline: false,
    timeout: options.timeout ?? 30_000,
    ...(options.input !== undefined ? { input: options.input } : { stdin: 'ignore' as const }),
  });
  return { stdout: String(result.stdout ?? ''), stderr: String(result.stderr ?? ''), exitCode: result.exitCode ?? -1 };
}

/**
 * Runs a bash pipeline (for `| head -1` checks) in the clean environment, with `pipefail` set and a
 * shell function `govctl` that runs the built command line.
 */
export async function runShell(script: string, options: RunCliOptions = {}): Promise<CliResult> {
  const home = options.home ?? makeHome();
  const result = await execa('bash', ['-o', 'pipefail', '-c', `govctl() { "$CLI_NODE" "$CLI_BIN" "$@"; }\n${script}`], {
    cwd: options.cwd ?? home,
    env: { ...cleanEnv(home, { ...(options.codeCacheInHome ? {} : codeCacheEnv()), ...options.env }), CLI_NODE: process.execPath, CLI_BIN: BIN },
    extendEnv: false,
    reject: false,
    stripFinalNewline: false,
    timeout: options.timeout ?? 30_000,
    ...(options.input !== undefined ? { input: options.input } : { stdin: 'ignore' as const }),
  });
  return { stdout: String(result.stdout ?? ''), stderr: String(result.stderr ?? ''), exitCode: result.exitCode ?? -1 };
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function isStale(): boolean {
  try {
    return statSync(BUNDLE).mtimeMs < newestMtime(join(REPO, 'src'));
  } catch {
    return true;
  }
}

const LOCK = join(REPO, 'node_modules', '.cache', 'govctl-build.lock');

/**
 * Builds the bundle (`node scripts/build.mjs --no-types`) when `dist/cli/main.js` is missing or
 * older than a file in src/. Test files run in parallel workers, so the build holds a lock
 * directory: one worker builds, the others wait and find it fresh.
 */
export async function ensureBuilt(): Promise<void> {
  if (!isStale()) return;
  mkdirSync(dirname(LOCK), { recursive: true });
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      // Another worker builds; a lock older than two minutes is left over from a killed run.
      try {
        if (Date.now() - statSync(LOCK).mtimeMs > 120_000) rmdirSync(LOCK);
      } catch {
        // gone already
      }
      if (Date.now() > deadline) throw new Error(`ensureBuilt: ${LOCK} is held too long`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    if (isStale()) execSync(`${JSON.stringify(process.execPath)} scripts/build.mjs --no-types`, { cwd: REPO, stdio: 'pipe' });
  } finally {
    rmdirSync(LOCK);
  }
}
