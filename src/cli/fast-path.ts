/**
 * The fast path: `govctl gates check --json` as a CI step runs it, without loading the full
 * command line (commander, every command's module, the record catalogue). bin/govctl.js tries it
 * first for `gates check`; it is a build of its own (dist/cli/fast-path.cjs, CommonJS, one file).
 *
 * It is not a second implementation: the settings, connection, API client, gate check, output and
 * error rendering are the full command's own modules (settings.ts, factory.ts, gates/check.ts,
 * session.ts). It only parses a narrow set of arguments itself. Anything else (another flag or
 * format, `--help`, no service configured, settings that fail to load) returns null before
 * anything is written or read from stdin, and the full command line runs instead, so every
 * message and exit code stays the full command's. `GOVCTL_NO_FAST_PATH=1` turns it off.
 */
import { FAIL_ON, type FailOn } from './gates/verdict.js';
import { run } from './gates/check.js';
import { createFactory, resolveConnection, type GlobalOptions } from './factory.js';
import { createProcessIO, type IO } from './io.js';
import { runSession } from './session.js';
import { loadSettings, type SettingFlags } from './settings.js';

/** The arguments the fast path takes: `gates check` and these flags. */
export interface FastGatesCheck {
  failOn: FailOn;
  /** `--json` (also renders errors as JSON, as in the full command line) */
  json: boolean;
  flags: SettingFlags;
}

/** Flags with a value, and the setting flag each fills (undefined: the command's own). */
const VALUE_FLAGS: Readonly<Record<string, keyof SettingFlags | 'failOn' | 'format'>> = {
  '--fail-on': 'failOn',
  '--format': 'format',
  '--base-url': 'baseUrl',
  '--workspace': 'workspace',
  '--api-key-file': 'apiKeyFile',
};

/**
 * `gates check` with only `--json`, `--format json`, `--fail-on LEVEL`, `--base-url URL`,
 * `--workspace ID` and `--api-key-file FILE` (not `-`), each at most once; null for anything else.
 */
export function parseFastGatesCheck(argv: readonly string[]): FastGatesCheck | null {
  if (argv[0] !== 'gates' || argv[1] !== 'check') return null;
  const seen = new Set<string>();
  const values: Partial<Record<string, string>> = {};
  let json = false;
  for (let i = 2; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    if (seen.has(name)) return null;
    seen.add(name);
    if (name === '--json' && eq < 0) {
      json = true;
      continue;
    }
    const key = VALUE_FLAGS[name];
    if (key === undefined) return null;
    const value = eq > 0 && arg.startsWith('--') ? arg.slice(eq + 1) : argv[(i += 1)];
    if (value === undefined || value.startsWith('-') || value === '') return null;
    values[key] = value;
  }
  if (values.format !== undefined && values.format !== 'json') return null;
  if (!json && values.format !== 'json') return null;
  const failOn = values.failOn ?? 'soft';
  if (!(FAIL_ON as readonly string[]).includes(failOn)) return null;
  const flags: SettingFlags = {};
  if (values.baseUrl !== undefined) flags.baseUrl = values.baseUrl;
  if (values.workspace !== undefined) flags.workspace = values.workspace;
  if (values.apiKeyFile !== undefined) flags.apiKeyFile = values.apiKeyFile;
  return { failOn: failOn as FailOn, json, flags };
}

/** What a run may be given instead of the process's own (tests run it in-process this way). */
export interface FastPathOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** the streams (default: the process's own, with its Ctrl-C and crash handlers) */
  io?: IO;
}

/**
 * Runs `govctl gates check` on the fast path when it applies.
 * @returns the exit code, or null when the full command line must run instead (nothing was written)
 */
export async function runFastPath(argv: readonly string[], options: FastPathOptions = {}): Promise<number | null> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  if (env.GOVCTL_NO_FAST_PATH) return null;
  const parsed = parseFastGatesCheck(argv);
  if (!parsed) return null;
  let settings;
  try {
    settings = await loadSettings({ flags: parsed.flags, env, cwd, readStdin: () => Promise.reject(new Error('the fast path never reads stdin')) });
    // The embedded store and every configuration error are the full command line's to handle.
    if (resolveConnection(settings, env).kind !== 'remote') return null;
  } catch {
    return null;
  }

  const globals: GlobalOptions = { ...parsed.flags, ...(parsed.json ? { json: true } : {}) };
  const io = options.io ?? createProcessIO(() => false, env);
  const controller = new AbortController();
  const factory = createFactory({ io, env, cwd, globals: () => globals, signal: controller.signal, settings });
  return runSession({
    io,
    factory,
    controller,
    processHandlers: options.io === undefined,
    execute: () => run({ failOn: parsed.failOn, format: 'json' }, factory),
    json: () => parsed.json,
    verbose: () => false,
    isWrite: () => false,
    windsDown: () => false,
  });
}
