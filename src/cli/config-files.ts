/**
 * Finding and reading config files (docs/security.md "A repository's configuration is untrusted
 * input"): the project config found by searching upward (data only: JSON or YAML), the user config
 * (JSON), and a file the user names with `--config FILE` (the only way a JavaScript config runs).
 */
import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { ConfigError } from './errors.js';

/**
 * Where a config file's values come from, and how far they are trusted:
 * - `project`: found by searching upward from the working directory; written by whoever wrote the
 *   repository, so it may not send the user's credentials anywhere or name files outside itself;
 * - `user`: `$XDG_CONFIG_HOME/govctl/config.json`, written by the user;
 * - `explicit`: the file named with `--config FILE`, chosen by the user.
 */
export type ConfigFileKind = 'project' | 'user' | 'explicit';

/** A loaded config file: its values, where it is, and the directory its paths may not leave. */
export interface ConfigFile {
  path: string;
  kind: ConfigFileKind;
  /** the project root: the directory the search found the file in (for `.config/…`, its parent) */
  root: string;
  values: Record<string, unknown>;
}

/** One place of the upward search, and whether loading it would run code. */
interface ConfigPlace {
  path: string;
  code: boolean;
}

/**
 * Project config places, in cosmiconfig's default order for module `govctl` (TypeScript ones left
 * out). The JavaScript ones are still looked for, to say that they were ignored and how to load
 * one: a repository must not run code on `govctl whoami`.
 */
export const PROJECT_CONFIG_PLACES: readonly ConfigPlace[] = [
  'package.json',
  '.govctlrc',
  '.govctlrc.json',
  '.govctlrc.yaml',
  '.govctlrc.yml',
  '.govctlrc.js',
  '.govctlrc.cjs',
  '.govctlrc.mjs',
  '.config/govctlrc',
  '.config/govctlrc.json',
  '.config/govctlrc.yaml',
  '.config/govctlrc.yml',
  '.config/govctlrc.js',
  '.config/govctlrc.cjs',
  '.config/govctlrc.mjs',
  'govctl.config.js',
  'govctl.config.cjs',
  'govctl.config.mjs',
].map((path) => ({ path, code: /\.[cm]?js$/.test(path) }));

/**
 * The home directory of the run: `HOME` from the run's environment (not the process's, so that a run
 * given its own environment, as tests give one in-process, finds its own files), else the OS's.
 */
export function homeDirectory(env: NodeJS.ProcessEnv): string {
  return env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
}

/** `$XDG_CONFIG_HOME/govctl/config.json`, `~/.config` when unset. */
export function userConfigPath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : join(homeDirectory(env), '.config');
  return join(base, 'govctl', 'config.json');
}

/** A path for messages: the home directory as `~`. */
export function displayPath(path: string): string {
  const home = homedir();
  return home && home !== '/' && (path === home || path.startsWith(home + '/')) ? '~' + path.slice(home.length) : path;
}

/** A path from a config file, relative to the file's directory; `~/` is the run's home directory. */
export function configPath(file: ConfigFile, value: string, env: NodeJS.ProcessEnv): string {
  return value === '~' || value.startsWith('~/') ? join(homeDirectory(env), value.slice(1)) : resolve(dirname(file.path), value);
}

export function errorText(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'it is a directory';
  return error instanceof Error ? error.message.split('\n')[0] : String(error);
}

/**
 * A loader's error without its code frames: cosmiconfig's JSON and YAML errors span several lines
 * (`JSON Error in FILE:`, a frame, the reason, the frame again); the reason is what matters, without
 * the file's text.
 */
function loaderErrorText(error: unknown): string {
  if (!(error instanceof Error) || (error as { code?: unknown }).code !== undefined) return errorText(error);
  const reasons = error.message
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^(>|\d*\s*\||-+\^|(JSON|YAML) Error in )/.test(line));
  // Parsers quote the text they choke on, and a config file may hold a key: never echo it.
  return (reasons[0] ?? 'malformed')
    .replace(/ while parsing .*$/, '')
    .replace(/(["'])(?! or )[^"'\n]{4,}\1/g, '…')
    .trim();
}

type Loader = { load(path: string): Promise<{ config: unknown; isEmpty?: boolean } | null> };

async function createExplorer(): Promise<Loader> {
  // A CommonJS module: bundled, its exports arrive as `default` only.
  const loaded = (await import('cosmiconfig')) as typeof import('cosmiconfig') & { default?: typeof import('cosmiconfig') };
  const { cosmiconfig } = loaded.default ?? loaded;
  return cosmiconfig('govctl', { cache: false, searchStrategy: 'none' });
}

/**
 * A package.json or a `.json` config file read without cosmiconfig (loading it costs more than a
 * CI gate's whole check): its config (the `govctl` key of a package.json; undefined when it has
 * none or the file is empty), or undefined when the file is not plain JSON, so that cosmiconfig's
 * loader reads it and reports its error as it always does.
 */
function readPlainJsonConfig(path: string): { config: unknown } | undefined {
  if (!path.endsWith('.json')) return undefined;
  const isPackage = path.endsWith('/package.json') || path === 'package.json';
  let parsed: unknown;
  try {
    const text = withoutBom(readFileSync(path, 'utf8'));
    if (!isPackage && text.trim() === '') return { config: undefined };
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isPackage) return { config: parsed };
  return { config: parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>).govctl : undefined };
}

/**
 * Reads one config file of any supported format (JSON, YAML, and JavaScript: the callers decide
 * whether code may run). Undefined when it holds no config. An unreadable or malformed file is an
 * error (78), not skipped: a gate must not silently run with other settings than the ones written.
 */
async function readConfigFile(path: string, kind: ConfigFileKind, root: string): Promise<ConfigFile | undefined> {
  const plain = readPlainJsonConfig(path);
  let config: unknown;
  if (plain !== undefined) config = plain.config;
  else {
    try {
      // Creating the explorer reads package.json too (for cosmiconfig's own settings): inside the try.
      const result = await (await createExplorer()).load(path);
      config = result === null || result.isEmpty ? undefined : result.config;
    } catch (error) {
      throw new ConfigError(`cannot read the config file ${displayPath(path)}: ${loaderErrorText(error)}`, {
        hint: 'fix or remove the file (see `govctl config show`)',
      });
    }
  }
  if (config === undefined || config === null) return undefined;
  return { path, kind, root, values: checkConfigObject(config, path) };
}

/**
 * The project config: the first data file of {@link PROJECT_CONFIG_PLACES} in the working
 * directory or a parent (a package.json counts only with a `govctl` key). A JavaScript file on the
 * way is never loaded: it draws a warning saying how to load it on purpose, and the search goes on.
 */
export async function findProjectConfig(cwd: string, warnings: string[]): Promise<ConfigFile | undefined> {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    for (const place of PROJECT_CONFIG_PLACES) {
      const path = join(dir, place.path);
      // One stat per place, not a listing of the directory: the search passes through directories
      // such as /tmp or a home directory with thousands of entries, whose listing alone cost more
      // than a whole read command (56 ms for 39 000 entries).
      try {
        if (!statSync(path, { throwIfNoEntry: false })?.isFile()) continue;
      } catch {
        continue; // not a directory on the way, or not readable
      }
      if (place.code) {
        warnings.push(
          `warning: ignored ${displayPath(path)}: a JavaScript config found by searching is never run (a repository could run any code); ` +
            `to use it on purpose, give --config ${displayPath(path)}`,
        );
        continue;
      }
      const file = await readConfigFile(path, 'project', dir);
      if (file) return file;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** The file named with `--config FILE`: any format, JavaScript included, because the user chose it. */
export async function readExplicitConfig(path: string): Promise<ConfigFile | undefined> {
  try {
    if (!statSync(path).isFile()) throw Object.assign(new Error('not a file'), { code: 'EISDIR' });
  } catch (error) {
    throw new ConfigError(`cannot read --config ${displayPath(path)}: ${errorText(error)}`, { field: '--config', hint: 'give the path of a config file' });
  }
  return readConfigFile(path, 'explicit', dirname(path));
}

/** The user config (JSON only: nothing runs from it either), when the file exists. */
export async function readUserConfig(env: NodeJS.ProcessEnv): Promise<ConfigFile | undefined> {
  const path = userConfigPath(env);
  let text: string;
  try {
    text = withoutBom(readFileSync(path, 'utf8'));
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT' || (error as { code?: unknown }).code === 'ENOTDIR') return undefined;
    throw new ConfigError(`cannot read the user config file ${displayPath(path)}: ${errorText(error)}`, { hint: 'fix its permissions or remove it' });
  }
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`the user config file ${displayPath(path)} is not valid JSON: ${errorText(error)}`, { hint: 'fix or remove the file' });
  }
  return { path, kind: 'user', root: dirname(path), values: checkConfigObject(parsed, path) };
}

function checkConfigObject(value: unknown, path: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError(`the config file ${displayPath(path)} must hold an object of settings`, { hint: 'see `govctl config init` for an example' });
  }
  return value as Record<string, unknown>;
}

/** A string value of a config file, or undefined; any other type is a configuration error. */
export function configString(file: ConfigFile, key: string): string | undefined {
  const value = file.values[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    throw new ConfigError(`"${key}" in ${displayPath(file.path)} must be a string`, { field: key, hint: 'fix the config file' });
  }
  return value;
}

/** Levenshtein distance, for "did you mean" (config keys are short; the quadratic table is tiny). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length];
}

/** The known key closest to `key` (case ignored), when it is close enough to be a typo. */
export function closestKey(key: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}

/**
 * The text without a leading byte-order mark, which editors on Windows write: JSON.parse refuses
 * it, and the message would show an invisible character. Data files accept it too (input.ts).
 */
export function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
