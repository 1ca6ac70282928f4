/**
 * The fast path: `govctl gates check` as a CI step runs it, without loading the full
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
import { GATE_FORMATS, run, type GateFormat } from './gates/check.js';
import { resolveFormat } from './gates/resolve-format.js';
import { createFactory, resolveConnection, type GlobalOptions } from './factory.js';
import { createProcessIO, type IO } from './io.js';
import { runSession } from './session.js';
import { loadSettings, type SettingFlags } from './settings.js';

/** The arguments the fast path takes: `gates check` and these flags. */
export interface FastGatesCheck {
  failOn: FailOn;
  format: GateFormat;
  /** `--json` (also renders errors as JSON, as in the full command line) */
  json: boolean;
  noColor: boolean;
  verbose: boolean;
  flags: SettingFlags;
}

/** Flags with a value, and what each fills. */
const VALUE_FLAGS: Readonly<Record<string, keyof SettingFlags | 'failOn' | 'format'>> = {
  '--fail-on': 'failOn',
  '--format': 'format',
  '--base-url': 'baseUrl',
  '--workspace': 'workspace',
  '--api-key-file': 'apiKeyFile',
};

/** Flags without a value. */
const SWITCHES: Readonly<Record<string, 'json' | 'noColor' | 'verbose'>> = {
  '--json': 'json',
  '--no-color': 'noColor',
  '--verbose': 'verbose',
  '-v': 'verbose',
};

/**
 * `gates check` with only `--json`, `--format F`, `--fail-on LEVEL`, `--no-color`, `--verbose`,
 * `--base-url URL`, `--workspace ID` and `--api-key-file FILE` (not `-`), each at most once and
 * with valid values; null for anything else (the full command line parses and reports it).
 */
export function parseFastGatesCheck(argv: readonly string[]): FastGatesCheck | null {
  if (argv[0] !== 'gates' || argv[1] !== 'check') return null;
  const seen = new Set<string>();
  const values: Partial<Record<string, string>> = {};
  const switches = { json: false, noColor: false, verbose: false };
  for (let i = 2; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const switchName = SWITCHES[name];
    const key = switchName === undefined ? VALUE_FLAGS[name] : undefined;
    if ((switchName === undefined && key === undefined) || seen.has(switchName ?? key!)) return null;
    seen.add(switchName ?? key!);
    if (switchName !== undefined) {
      if (eq > 0) return null;
      switches[switchName] = true;
      continue;
    }
    const value = eq > 0 ? arg.slice(eq + 1) : argv[(i += 1)];
    if (value === undefined || value.startsWith('-') || value === '') return null;
    values[key!] = value;
  }
  const failOn = values.failOn ?? 'soft';
  if (!(FAIL_ON as readonly string[]).includes(failOn)) return null;
  if (values.format !== undefined && !(GATE_FORMATS as readonly string[]).includes(values.format)) return null;
  let format: GateFormat;
  try {
    format = resolveFormat(values.format, switches.json);
  } catch {
    return null;
  }
  const flags: SettingFlags = {};
  if (values.baseUrl !== undefined) flags.baseUrl = values.baseUrl;
  if (values.workspace !== undefined) flags.workspace = values.workspace;
  if (values.apiKeyFile !== undefined) flags.apiKeyFile = values.apiKeyFile;
  return { failOn: failOn as FailOn, format, ...switches, flags };
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

  // As commander gives them to the full command line: json and verbose only when given, color always.
  const globals: GlobalOptions = { ...parsed.flags, color: !parsed.noColor, ...(parsed.json ? { json: true } : {}), ...(parsed.verbose ? { verbose: true } : {}) };
  const io = options.io ?? createProcessIO(() => parsed.noColor, env);
  const controller = new AbortController();
  const factory = createFactory({ io, env, cwd, globals: () => globals, signal: controller.signal, settings });
  return runSession({
    io,
    factory,
    controller,
    processHandlers: options.io === undefined,
    execute: () => run({ failOn: parsed.failOn, format: parsed.format }, factory),
    json: () => parsed.json,
    verbose: () => parsed.verbose,
    isWrite: () => false,
    windsDown: () => false,
  });
}
