/**
 * Runs the built command line on a real terminal: `node bin/govctl.js …` under a pseudo-terminal
 * made by util-linux `script` (`script -qec "<command>" /dev/null`), in the same clean environment
 * as {@link runProcess} plus `TERM=xterm-256color` and `COLUMNS`.
 *
 * stdout and stderr both go to the terminal, so `output` is their merge, in the order written, with
 * the terminal's `\r\n` turned back into `\n`. `script -e` exits with the child's exit code.
 * stdin: with `input`, the text is written to a file and redirected into the command (stdin is then
 * not a terminal; typing into the pty would echo it into the output); without, stdin is the terminal.
 *
 * `script` is in Debian's essential bsdutils, so it is normally there; tests that need it use
 * {@link PTY_SKIP_REASON} (`describe.skipIf(!HAS_SCRIPT)`) to be skipped with a reason when it is not.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { BIN, cleanEnv, codeCacheEnv, makeHome, makeTempDir } from './cli.js';

export interface PtyResult {
  /** stdout and stderr as the terminal showed them (`\r\n` → `\n`), or stderr only with `stdoutTo` */
  output: string;
  exitCode: number;
}

export interface RunInPtyOptions {
  /** extra environment variables (wins over TERM and COLUMNS too; the environment is otherwise clean) */
  env?: Record<string, string | undefined>;
  /** what stdin holds, redirected from a file (default: stdin is the terminal) */
  input?: string | Buffer;
  /** working directory (default: the home directory) */
  cwd?: string;
  /** home directory (default: a new temporary one) */
  home?: string;
  /** terminal width (default 120): `stty cols N` and `COLUMNS=N` */
  columns?: number;
  /** redirect stdout to this file, so that only stderr is on the terminal */
  stdoutTo?: string;
  /** milliseconds before `script` is killed (default 30 000) */
  timeout?: number;
}

function scriptAvailable(): boolean {
  try {
    const probe = spawnSync('script', ['--version'], { encoding: 'utf8', timeout: 5_000 });
    return probe.status === 0 && /util-linux/.test(`${probe.stdout}${probe.stderr}`);
  } catch {
    return false;
  }
}

/** Whether util-linux `script` can be run. */
export const HAS_SCRIPT: boolean = scriptAvailable();

/** Why pty tests are skipped when {@link HAS_SCRIPT} is false. */
export const PTY_SKIP_REASON = 'util-linux `script` (bsdutils) is not installed: the real-terminal tests need it to make a pseudo-terminal';

/** A word for `sh -c`, single-quoted: `it's` → `'it'\''s'`. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Runs `govctl args…` on a pseudo-terminal; never throws on a failing exit code. */
export async function runInPty(args: readonly string[], options: RunInPtyOptions = {}): Promise<PtyResult> {
  if (!HAS_SCRIPT) throw new Error(PTY_SKIP_REASON);
  const home = options.home ?? makeHome();
  const columns = options.columns ?? 120;
  let command = `stty cols ${columns} rows 50 2>/dev/null; exec ${[process.execPath, BIN, ...args].map(shellQuote).join(' ')}`;
  if (options.input !== undefined) {
    const file = join(makeTempDir('govctl-pty-'), 'stdin');
    writeFileSync(file, options.input);
    command += ` < ${shellQuote(file)}`;
  }
  if (options.stdoutTo !== undefined) command += ` > ${shellQuote(options.stdoutTo)}`;
  const env = cleanEnv(home, { ...codeCacheEnv(), TERM: 'xterm-256color', COLUMNS: String(columns), ...options.env });
  const result = await execa('script', ['-qec', command, '/dev/null'], {
    cwd: options.cwd ?? home,
    env,
    extendEnv: false,
    reject: false,
    stripFinalNewline: false,
    timeout: options.timeout ?? 30_000,
    stdin: 'ignore',
    stderr: 'pipe',
  });
  const output = String(result.stdout ?? '') + String(result.stderr ?? '');
  return { output: output.replace(/\r\n/g, '\n'), exitCode: result.exitCode ?? -1 };
}

/** Matches an SGR colour/style escape (`ESC [ … m`), the kind colour output writes. */
export const ANSI_SGR = /\x1b\[[0-9;]*m/;

/** The text without ANSI escapes: CSI sequences (colour, cursor moves, erase) and cursor save/restore. */
export function stripAnsi(text: string): string {
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]/g, '');
}
