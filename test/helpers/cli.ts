/**
 * Runs the built command line as a user would: `node bin/govctl.js …` with execa, in a clean
 * environment (docs/architecture.md, "Test helpers"). Nothing of the developer's environment
 * leaks in: no SERVICE_*, GOVCTL_*, CI, NO_COLOR or FORCE_COLOR unless a test gives them, and HOME
 * and the XDG directories point into a temporary directory.
 */
import { execSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, rmdirSync, statSync } from 'node:fs';
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
  /** what stdin holds (default: nothing; stdin is /dev/null) */
  input?: string | Buffer;
  /** working directory (default: the home directory) */
  cwd?: string;
  /** home directory, with XDG_CONFIG_HOME and XDG_DATA_HOME inside it (default: a new temporary one) */
  home?: string;
  /** milliseconds before the process is killed (default 30 000) */
  timeout?: number;
}

const made: string[] = [];
process.once('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A new temporary directory, removed when the test process ends. */
export function makeTempDir(prefix = 'govctl-cli-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** A home directory for one test: `config/` and `data/` inside it serve as the XDG directories. */
export function makeHome(): string {
  const home = makeTempDir('govctl-home-');
  mkdirSync(join(home, 'config'), { recursive: true });
  mkdirSync(join(home, 'data'), { recursive: true });
  return home;
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

/** Runs `govctl args…` and returns what it printed and its exit code (never throws on failure). */
export async function runCli(args: readonly string[], options: RunCliOptions = {}): Promise<CliResult> {
  const home = options.home ?? makeHome();
  const result = await execa(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? home,
    env: cleanEnv(home, options.env),
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
    env: { ...cleanEnv(home, options.env), CLI_NODE: process.execPath, CLI_BIN: BIN },
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
