/**
 * Settings and where each came from (design/cli.md "Settings"). Precedence, highest first:
 * flags > environment > project config file (cosmiconfig, module `govctl`, searched upward from
 * the working directory) > user config (`$XDG_CONFIG_HOME/govctl/config.json`) > defaults.
 *
 * Secrets: the API key is never a plain flag value (`--api-key-file FILE|-` or `SERVICE_API_KEY`),
 * the signing key is parsed only when a command needs it, and neither appears in any message.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { SigningKeyError } from '../core/signing/errors.js';
import type { SigningKey } from '../core/signing/keys.js';
import { ConfigError, UsageError } from './errors.js';

/** The settings of design/cli.md's table. */
export const SETTING_NAMES = ['baseUrl', 'apiKey', 'workspaceId', 'systemName', 'agentName', 'signingKey', 'authorisedBy', 'onError', 'dataDir'] as const;
export type SettingName = (typeof SETTING_NAMES)[number];

/** The environment variable of each setting that has one. */
export const SETTING_ENV: Readonly<Partial<Record<SettingName, string>>> = {
  baseUrl: 'SERVICE_BASE_URL',
  apiKey: 'SERVICE_API_KEY',
  workspaceId: 'SERVICE_WORKSPACE_ID',
  systemName: 'SERVICE_SYSTEM_NAME',
  agentName: 'SERVICE_AGENT_NAME',
  signingKey: 'SERVICE_SIGNING_KEY',
  onError: 'SERVICE_ON_ERROR',
  dataDir: 'GOVCTL_DATA_DIR',
};

/** The flag of each setting. */
export const SETTING_FLAG: Readonly<Record<SettingName, string>> = {
  baseUrl: '--base-url',
  apiKey: '--api-key-file',
  workspaceId: '--workspace',
  systemName: '--system',
  agentName: '--agent',
  signingKey: '--signing-key-file',
  authorisedBy: '--authorised-by',
  onError: '--on-error',
  dataDir: '--data-dir',
};

export const ON_ERROR_MODES = ['warn', 'raise', 'silent'] as const;
export type OnErrorMode = (typeof ON_ERROR_MODES)[number];

/** `--base-url local`: the embedded store, asked for explicitly. */
export const LOCAL_BASE_URL = 'local';

export type SourceKind = 'flag' | 'env' | 'project' | 'user' | 'default';

/** Where a setting's value came from. */
export interface SettingSource {
  kind: SourceKind;
  /** the flag, the environment variable, or the config file's path (with the key) */
  name: string;
}

export interface AuthorisedBySetting {
  identity: string;
  role?: string;
  sessionId?: string;
}

/** The effective settings. Secrets are held here but never printed. */
export interface Settings {
  baseUrl?: string;
  apiKey?: string;
  workspaceId?: string;
  systemName?: string;
  /** the agent name; defaults to the system name where it is used */
  agentName?: string;
  authorisedBy?: AuthorisedBySetting;
  onError: OnErrorMode;
  dataDir: string;
  /** whether a signing key is configured (without parsing it) */
  readonly hasSigningKey: boolean;
  /**
   * The signing key, parsed on first use (node:crypto loads then); undefined when none is configured.
   * @throws ConfigError (78) naming the setting, never the value, when it is malformed
   */
  signingKey(): Promise<SigningKey | undefined>;
  /** where each set value came from */
  readonly sources: Readonly<Partial<Record<SettingName, SettingSource>>>;
  /** the config files that were read */
  readonly files: { project?: string; user?: string };
  /** one-line warnings to show once (a key file readable by others, an unknown config key) */
  readonly warnings: readonly string[];
}

/** The global flags that feed settings (commander's parsed option values). */
export interface SettingFlags {
  baseUrl?: string;
  apiKeyFile?: string;
  workspace?: string;
  system?: string;
  agent?: string;
  signingKeyFile?: string;
  onError?: string;
  dataDir?: string;
}

/** What {@link loadSettings} reads besides the flags. */
export interface SettingsContext {
  flags: SettingFlags;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** reads all of stdin (for `--api-key-file -`) */
  readStdin: () => Promise<string>;
}

/** Keys a config file may hold: the settings, plus files that hold the secrets. */
const CONFIG_KEYS = new Set<string>([...SETTING_NAMES, 'apiKeyFile', 'signingKeyFile']);

/** Project config files, in cosmiconfig's default order for module `govctl` (TypeScript ones left out). */
export const PROJECT_CONFIG_PLACES: readonly string[] = [
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
];

/** `$XDG_CONFIG_HOME/govctl/config.json`, `~/.config` when unset. */
export function userConfigPath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : join(homeDirectory(env), '.config');
  return join(base, 'govctl', 'config.json');
}

/** `$XDG_DATA_HOME/govctl`, `~/.local/share/govctl` when unset. */
export function defaultDataDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_DATA_HOME && isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : join(homeDirectory(env), '.local', 'share');
  return join(base, 'govctl');
}

/**
 * The home directory of the run: `HOME` from the run's environment (not the process's, so that a run
 * given its own environment, as tests give one in-process, finds its own files), else the OS's.
 */
function homeDirectory(env: NodeJS.ProcessEnv): string {
  return env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
}

/** A path from a config file, relative to the file's directory; `~/` is the home directory. */
function configPath(file: ConfigFile, value: string, env: NodeJS.ProcessEnv): string {
  return value === '~' || value.startsWith('~/') ? join(homeDirectory(env), value.slice(1)) : resolve(dirname(file.path), value);
}

/** A path for messages: the home directory as `~`. */
export function displayPath(path: string): string {
  const home = homedir();
  return home && home !== '/' && (path === home || path.startsWith(home + '/')) ? '~' + path.slice(home.length) : path;
}

/** A loaded config file: its values and where it is. */
interface ConfigFile {
  path: string;
  kind: 'project' | 'user';
  values: Record<string, unknown>;
}

function errorText(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'it is a directory';
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
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

/**
 * The project config: the first file of {@link PROJECT_CONFIG_PLACES} in the working directory or
 * a parent (a package.json counts only with a `govctl` key). Plain JSON files are read directly;
 * the others (and malformed JSON, for its error message) with cosmiconfig's loaders (YAML, JS). An unreadable or malformed file is an error (78), not
 * skipped: a gate must not silently run with other settings than the ones written down.
 */
async function findProjectConfig(cwd: string): Promise<ConfigFile | undefined> {
  let explorer: { load(path: string): Promise<{ config: unknown; isEmpty?: boolean } | null> } | undefined;
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    let names: Set<string>;
    try {
      names = new Set(readdirSync(dir));
    } catch {
      names = new Set();
    }
    for (const place of PROJECT_CONFIG_PLACES) {
      const first = place.split('/')[0]!;
      if (!names.has(first)) continue;
      const path = join(dir, place);
      try {
        if (!statSync(path).isFile()) continue;
      } catch {
        continue;
      }
      const plain = readPlainJsonConfig(path, place);
      if (plain !== undefined) {
        if (plain.config === undefined || plain.config === null) continue;
        return { path, kind: 'project', values: checkConfigObject(plain.config, path) };
      }
      let result: { config: unknown; isEmpty?: boolean } | null;
      try {
        // Inside the try: creating the explorer reads package.json too (for cosmiconfig's own settings).
        explorer ??= await createExplorer();
        result = await explorer.load(path);
      } catch (error) {
        throw new ConfigError(`cannot read the config file ${displayPath(path)}: ${loaderErrorText(error)}`, {
          hint: 'fix or remove the file (see `govctl config show`)',
        });
      }
      if (result === null || result.isEmpty || result.config === undefined || result.config === null) continue;
      return { path, kind: 'project', values: checkConfigObject(result.config, path) };
    }
    if (dirname(dir) === dir) return undefined;
  }
}

async function createExplorer(): Promise<{ load(path: string): Promise<{ config: unknown; isEmpty?: boolean } | null> }> {
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
function readPlainJsonConfig(path: string, place: string): { config: unknown } | undefined {
  if (!place.endsWith('.json')) return undefined;
  let parsed: unknown;
  try {
    const text = readFileSync(path, 'utf8');
    if (place !== 'package.json' && text.trim() === '') return { config: undefined };
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (place !== 'package.json') return { config: parsed };
  return { config: parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>).govctl : undefined };
}

/** The user config, when the file exists. */
async function readUserConfig(env: NodeJS.ProcessEnv): Promise<ConfigFile | undefined> {
  const path = userConfigPath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
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
  return { path, kind: 'user', values: checkConfigObject(parsed, path) };
}

function checkConfigObject(value: unknown, path: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError(`the config file ${displayPath(path)} must hold an object of settings`, { hint: 'see `govctl config init` for an example' });
  }
  return value as Record<string, unknown>;
}

function configString(file: ConfigFile, key: string): string | undefined {
  const value = file.values[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    throw new ConfigError(`"${key}" in ${displayPath(file.path)} must be a string`, { field: key, hint: 'fix the config file' });
  }
  return value;
}

/** Reads a secret from a file (`-`: stdin); trailing white space is dropped. */
async function readSecretFile(path: string, flag: string, context: SettingsContext, warnings: string[]): Promise<string> {
  if (path === '-') return (await context.readStdin()).trim();
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
    warnIfShared(path, 'holds a secret', warnings);
  } catch (error) {
    throw new ConfigError(`cannot read ${flag} ${displayPath(path)}: ${errorText(error)}`, { field: flag, hint: 'give a readable file' });
  }
  return text.trim();
}

/** A one-line warning when a file holding a secret is readable by group or others. */
function warnIfShared(path: string, what: string, warnings: string[]): void {
  try {
    if ((statSync(path).mode & 0o077) !== 0) {
      warnings.push(`warning: ${displayPath(path)} ${what} and is readable by other users; run: chmod 600 ${path}`);
    }
  } catch {
    // It was readable a moment ago; nothing to warn about if it is gone.
  }
}

function envValue(env: NodeJS.ProcessEnv, name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * Loads the settings from flags, environment, project and user config.
 * @throws UsageError for a bad flag value; ConfigError (78) for an unreadable or malformed config file or key file
 */
export async function loadSettings(context: SettingsContext): Promise<Settings> {
  const { flags, env, cwd } = context;
  const warnings: string[] = [];
  const [project, user] = await Promise.all([findProjectConfig(cwd), readUserConfig(env)]);
  const files = [project, user].filter((file): file is ConfigFile => file !== undefined);
  for (const file of files) {
    for (const key of Object.keys(file.values)) {
      if (!CONFIG_KEYS.has(key)) warnings.push(`warning: unknown setting "${key}" in ${displayPath(file.path)} (ignored)`);
    }
    if (file.values.apiKey !== undefined || file.values.signingKey !== undefined) {
      warnIfShared(file.path, `holds ${file.values.apiKey !== undefined ? 'an API key' : 'a signing key'}`, warnings);
    }
  }

  const sources: Partial<Record<SettingName, SettingSource>> = {};

  /** A plain string setting: flag > env > project > user. Config paths resolve against the file's directory. */
  const pick = (name: SettingName, flagValue: string | undefined, isPath = false): string | undefined => {
    if (flagValue !== undefined && flagValue !== '') {
      sources[name] = { kind: 'flag', name: SETTING_FLAG[name] };
      return isPath ? resolve(cwd, flagValue) : flagValue;
    }
    const fromEnv = envValue(env, SETTING_ENV[name]);
    if (fromEnv !== undefined) {
      sources[name] = { kind: 'env', name: SETTING_ENV[name]! };
      return isPath ? resolve(cwd, fromEnv) : fromEnv;
    }
    for (const file of files) {
      const value = configString(file, name);
      if (value !== undefined && value !== '') {
        sources[name] = { kind: file.kind, name: `${file.path} (${name})` };
        return isPath ? configPath(file, value, env) : value;
      }
    }
    return undefined;
  };

  const settings: {
    -readonly [K in keyof Settings]: Settings[K];
  } = {
    onError: 'raise',
    dataDir: '',
    hasSigningKey: false,
    signingKey: () => Promise.resolve(undefined),
    sources,
    files: {},
    warnings,
  };
  if (project) settings.files.project = project.path;
  if (user) settings.files.user = user.path;

  settings.baseUrl = pick('baseUrl', flags.baseUrl);
  settings.workspaceId = pick('workspaceId', flags.workspace);
  settings.systemName = pick('systemName', flags.system);
  settings.agentName = pick('agentName', flags.agent);
  settings.dataDir = pick('dataDir', flags.dataDir, true) ?? defaultDataDir(env);
  if (!sources.dataDir) sources.dataDir = { kind: 'default', name: '$XDG_DATA_HOME/govctl' };

  const onError = pick('onError', flags.onError);
  if (onError !== undefined) {
    if (!(ON_ERROR_MODES as readonly string[]).includes(onError)) {
      const where = sources.onError!;
      const message = `${where.kind === 'flag' ? '--on-error' : where.name} must be one of ${ON_ERROR_MODES.join(', ')}`;
      throw where.kind === 'flag' ? new UsageError(message, { field: '--on-error' }) : new ConfigError(message, { field: 'onError' });
    }
    settings.onError = onError as OnErrorMode;
  } else sources.onError = { kind: 'default', name: 'raise' };

  // The API key: --api-key-file > SERVICE_API_KEY > apiKey / apiKeyFile in a config file.
  if (flags.apiKeyFile !== undefined) {
    settings.apiKey = await readSecretFile(flags.apiKeyFile === '-' ? '-' : resolve(cwd, flags.apiKeyFile), '--api-key-file', context, warnings);
    sources.apiKey = { kind: 'flag', name: `--api-key-file ${flags.apiKeyFile === '-' ? '-' : displayPath(resolve(cwd, flags.apiKeyFile))}` };
  } else if (envValue(env, 'SERVICE_API_KEY') !== undefined) {
    settings.apiKey = envValue(env, 'SERVICE_API_KEY')!.trim();
    sources.apiKey = { kind: 'env', name: 'SERVICE_API_KEY' };
  } else {
    for (const file of files) {
      const inline = configString(file, 'apiKey');
      const keyFile = configString(file, 'apiKeyFile');
      if (inline) {
        settings.apiKey = inline.trim();
        sources.apiKey = { kind: file.kind, name: `${file.path} (apiKey)` };
        break;
      }
      if (keyFile) {
        const path = configPath(file, keyFile, env);
        settings.apiKey = await readSecretFile(path, `apiKeyFile in ${displayPath(file.path)}`, context, warnings);
        sources.apiKey = { kind: file.kind, name: `${file.path} (apiKeyFile ${path})` };
        break;
      }
    }
  }
  if (settings.apiKey === '') throw new ConfigError(`the API key from ${sources.apiKey?.name ?? 'the settings'} is empty`, { field: 'apiKey' });

  // The signing key: --signing-key-file > SERVICE_SIGNING_KEY > signingKey / signingKeyFile. Only
  // its text is read here; it is parsed (and a malformed one reported) by the command that signs.
  let signingKeyText: string | undefined;
  let signingKeySetting = '';
  if (flags.signingKeyFile !== undefined) {
    const path = flags.signingKeyFile === '-' ? '-' : resolve(cwd, flags.signingKeyFile);
    signingKeyText = await readSecretFile(path, '--signing-key-file', context, warnings);
    signingKeySetting = `--signing-key-file ${path === '-' ? '-' : displayPath(path)}`;
    sources.signingKey = { kind: 'flag', name: signingKeySetting };
  } else if (envValue(env, 'SERVICE_SIGNING_KEY') !== undefined) {
    signingKeyText = envValue(env, 'SERVICE_SIGNING_KEY');
    signingKeySetting = 'SERVICE_SIGNING_KEY';
    sources.signingKey = { kind: 'env', name: signingKeySetting };
  } else {
    for (const file of files) {
      const inline = configString(file, 'signingKey');
      const keyFile = configString(file, 'signingKeyFile');
      if (inline) {
        signingKeyText = inline;
        signingKeySetting = `signingKey in ${displayPath(file.path)}`;
        sources.signingKey = { kind: file.kind, name: `${file.path} (signingKey)` };
        break;
      }
      if (keyFile) {
        const path = configPath(file, keyFile, env);
        signingKeyText = await readSecretFile(path, `signingKeyFile in ${displayPath(file.path)}`, context, warnings);
        signingKeySetting = `signingKeyFile ${displayPath(path)}`;
        sources.signingKey = { kind: file.kind, name: `${file.path} (signingKeyFile ${path})` };
        break;
      }
    }
  }
  if (signingKeyText !== undefined) {
    settings.hasSigningKey = true;
    let parsed: Promise<SigningKey> | undefined;
    settings.signingKey = () =>
      (parsed ??= import('../core/signing/keys.js').then(({ SigningKey }) => {
        try {
          return SigningKey.fromHex(signingKeyText!, signingKeySetting);
        } catch (error) {
          if (error instanceof SigningKeyError) throw new ConfigError(error.message, { field: signingKeySetting });
          throw error;
        }
      }));
  }

  // authorised_by from a config file; the attest commands' --authorised-by, --role and
  // --session-id win over it (attest/build.ts).
  for (const file of files) {
    const value = file.values.authorisedBy;
    if (value === undefined || value === null) continue;
    settings.authorisedBy = authorisedByFromConfig(value, file);
    sources.authorisedBy = { kind: file.kind, name: `${file.path} (authorisedBy)` };
    break;
  }
  return settings;
}

function authorisedByFromConfig(value: unknown, file: ConfigFile): AuthorisedBySetting {
  const fail = () =>
    new ConfigError(`"authorisedBy" in ${displayPath(file.path)} must be an e-mail or an object {identity, role?, sessionId?}`, { field: 'authorisedBy' });
  if (typeof value === 'string' && value !== '') return { identity: value };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw fail();
  const object = value as Record<string, unknown>;
  if (typeof object.identity !== 'string' || object.identity === '') throw fail();
  const by: AuthorisedBySetting = { identity: object.identity };
  const role = object.role;
  const session = object.sessionId ?? object.session_id;
  if (role !== undefined && typeof role !== 'string') throw fail();
  if (session !== undefined && typeof session !== 'string') throw fail();
  if (role) by.role = role;
  if (session) by.sessionId = session as string;
  return by;
}
