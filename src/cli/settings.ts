/**
 * Settings and where each came from (docs/cli.md "Settings"). Precedence, highest first:
 * flags > environment > config file (the one named with `--config FILE`, else the project config
 * searched upward from the working directory, data formats only) > user config
 * (`$XDG_CONFIG_HOME/govctl/config.json`) > defaults.
 *
 * Precedence says which value wins; trust says where a secret may go (trust.ts): a project config
 * cannot send the user's API key to its own host, nor name key files outside the project.
 *
 * Secrets: the API key is never a plain flag value (`--api-key-file FILE|-` or `SERVICE_API_KEY`),
 * the signing key is parsed only when a command needs it, and neither appears in any message.
 */
import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { SigningKeyError } from '../core/signing/errors.js';
import type { SigningKey } from '../core/signing/keys.js';
import {
  closestKey,
  configPath,
  configString,
  displayPath,
  errorText,
  findProjectConfig,
  homeDirectory,
  readExplicitConfig,
  readUserConfig,
  userConfigPath,
  type ConfigFile,
} from './config-files.js';
import { ConfigError, UsageError } from './errors.js';
import { settingFromEnv, settingVariables } from './environment.js';
import { checkPathInProject, TRUSTED_HOSTS_KEY, trustedHosts, type TrustedHost } from './trust.js';

export { displayPath, userConfigPath };

/** The settings of the table of docs/cli.md "Settings". */
export const SETTING_NAMES = [
  'baseUrl',
  'apiKey',
  'workspaceId',
  'systemName',
  'agentName',
  'signingKey',
  'authorisedBy',
  'onError',
  'dataDir',
  'ledgerKey',
  'timeout',
] as const;
export type SettingName = (typeof SETTING_NAMES)[number];

/** The environment variables of each setting that has them, as messages name them (environment.ts). */
export const SETTING_ENV: Readonly<Partial<Record<SettingName, string>>> = Object.fromEntries(
  SETTING_NAMES.map((name) => [name, settingVariables(name)]).filter(([, variables]) => variables !== undefined),
);

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
  ledgerKey: '--ledger-key',
  timeout: '--timeout',
};

export const ON_ERROR_MODES = ['warn', 'raise', 'silent'] as const;
export type OnErrorMode = (typeof ON_ERROR_MODES)[number];

/** `--base-url local`: the embedded store, asked for explicitly. */
export const LOCAL_BASE_URL = 'local';

/** `explicit`: the config file named with `--config FILE`. */
export type SourceKind = 'flag' | 'env' | 'project' | 'user' | 'explicit' | 'default';

/** Whether a source is a config file (its name is the file's path and key). */
export function isFileSource(kind: SourceKind): boolean {
  return kind === 'project' || kind === 'user' || kind === 'explicit';
}

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
  /** the pinned verifier key of the workspace's transparency log (`govctl ledger`; public, not a secret) */
  ledgerKey?: string;
  /** the per-request timeout in ms (`--timeout`); undefined: the client library's 15 s */
  timeout?: number;
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
  readonly files: { project?: string; user?: string; explicit?: string };
  /** hosts the user pinned for their credentials (user config `trustedHosts`, GOVCTL_TRUSTED_HOSTS) */
  readonly trustedHosts: readonly TrustedHost[];
  /** the user config's base URL when a project config's overrides it (for the trust message) */
  readonly userBaseUrl?: string;
  /** one-line warnings to show once (a key file readable by others, an unknown config key) */
  readonly warnings: readonly string[];
}

/** The global flags that feed settings (commander's parsed option values). */
export interface SettingFlags {
  /** `--config FILE`: the config file to use instead of searching for a project config */
  config?: string;
  baseUrl?: string;
  apiKeyFile?: string;
  workspace?: string;
  system?: string;
  agent?: string;
  signingKeyFile?: string;
  onError?: string;
  dataDir?: string;
  ledgerKey?: string;
  timeout?: string;
}

/** What {@link loadSettings} reads besides the flags. */
export interface SettingsContext {
  flags: SettingFlags;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** reads all of stdin (for `--api-key-file -`) */
  readStdin: () => Promise<string>;
}

/** Keys any config file may hold: the settings, plus files that hold the secrets. */
export const CONFIG_KEYS: readonly string[] = [...SETTING_NAMES, 'apiKeyFile', 'signingKeyFile'];

/** Keys only the user config may hold. */
const USER_ONLY_KEYS: readonly string[] = [TRUSTED_HOSTS_KEY];

/** `$XDG_DATA_HOME/govctl`, `~/.local/share/govctl` when unset. */
export function defaultDataDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_DATA_HOME && isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : join(homeDirectory(env), '.local', 'share');
  return join(base, 'govctl');
}

/**
 * The config files of a run, highest precedence first: the one named with `--config` (then no
 * project config is searched for) or the project config, then the user config.
 */
async function readConfigFiles(context: SettingsContext, warnings: string[]): Promise<{ files: ConfigFile[]; user?: ConfigFile }> {
  const { flags, env, cwd } = context;
  const [first, user] = await Promise.all([
    flags.config !== undefined && flags.config !== '' ? readExplicitConfig(resolve(cwd, flags.config)) : findProjectConfig(cwd, warnings),
    readUserConfig(env),
  ]);
  const files = [first, user].filter((file): file is ConfigFile => file !== undefined);
  return user ? { files, user } : { files };
}

/** Warnings about what the files hold: unknown keys (with a suggestion), secrets others can read. */
function warnAboutFiles(files: readonly ConfigFile[], warnings: string[]): void {
  for (const file of files) {
    const known = file.kind === 'user' ? [...CONFIG_KEYS, ...USER_ONLY_KEYS] : CONFIG_KEYS;
    for (const key of Object.keys(file.values)) {
      if (known.includes(key)) continue;
      if (USER_ONLY_KEYS.includes(key)) {
        warnings.push(`warning: "${key}" in ${displayPath(file.path)} is ignored: only your user config or ${'GOVCTL_TRUSTED_HOSTS'} can pin hosts`);
        continue;
      }
      const suggestion = closestKey(key, known);
      warnings.push(`warning: unknown setting "${key}" in ${displayPath(file.path)} (ignored)${suggestion ? `; did you mean "${suggestion}"?` : ''}`);
    }
    if (file.values.apiKey !== undefined || file.values.signingKey !== undefined) {
      warnIfShared(file.path, `holds ${file.values.apiKey !== undefined ? 'an API key' : 'a signing key'}`, warnings);
    }
  }
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

/**
 * A plain string setting: flag > env > config files in order. Paths resolve against the working
 * directory (flag, env) or the file's directory (config), and the source is recorded.
 */
function pickSetting(
  name: SettingName,
  flagValue: string | undefined,
  context: SettingsContext,
  files: readonly ConfigFile[],
  sources: Partial<Record<SettingName, SettingSource>>,
  isPath = false,
): string | undefined {
  const { env, cwd } = context;
  if (flagValue !== undefined && flagValue !== '') {
    sources[name] = { kind: 'flag', name: SETTING_FLAG[name] };
    return isPath ? resolve(cwd, flagValue) : flagValue;
  }
  const fromEnv = settingFromEnv(env, name);
  if (fromEnv !== undefined) {
    sources[name] = { kind: 'env', name: fromEnv.name };
    return isPath ? resolve(cwd, fromEnv.value) : fromEnv.value;
  }
  for (const file of files) {
    // A timeout may be written as a number of seconds (`"timeout": 30`).
    const raw = file.values[name];
    const value = name === 'timeout' && typeof raw === 'number' ? String(raw) : configString(file, name);
    if (value !== undefined && value !== '') {
      sources[name] = { kind: file.kind, name: `${file.path} (${name})` };
      return isPath ? configPath(file, value, env) : value;
    }
  }
  return undefined;
}

/** How one secret is configured: a file flag, an environment variable, inline or as a file in a config. */
interface SecretSpec {
  /** the flag's value (`--api-key-file`, `--signing-key-file`) */
  flagValue: string | undefined;
  flag: string;
  /** the setting, whose environment variables (environment.ts) hold the secret */
  setting: 'apiKey' | 'signingKey';
  /** the config keys holding the secret itself, and the path of a file holding it */
  inlineKey: string;
  fileKey: string;
}

/** A secret's text, its source, and how messages name it (never its value). */
interface LoadedSecret {
  text: string;
  source: SettingSource;
  label: string;
}

/**
 * A secret: `--…-file` > environment > the config files in order (inline, or a file that a
 * project config may name only inside the project).
 */
async function loadSecret(spec: SecretSpec, files: readonly ConfigFile[], context: SettingsContext, warnings: string[]): Promise<LoadedSecret | undefined> {
  if (spec.flagValue !== undefined) {
    const path = spec.flagValue === '-' ? '-' : resolve(context.cwd, spec.flagValue);
    const label = `${spec.flag} ${path === '-' ? '-' : displayPath(path)}`;
    return { text: await readSecretFile(path, spec.flag, context, warnings), source: { kind: 'flag', name: label }, label };
  }
  const fromEnv = settingFromEnv(context.env, spec.setting);
  if (fromEnv !== undefined) return { text: fromEnv.value.trim(), source: { kind: 'env', name: fromEnv.name }, label: fromEnv.name };
  for (const file of files) {
    const inline = configString(file, spec.inlineKey);
    if (inline) {
      return {
        text: inline.trim(),
        source: { kind: file.kind, name: `${file.path} (${spec.inlineKey})` },
        label: `${spec.inlineKey} in ${displayPath(file.path)}`,
      };
    }
    const keyFile = configString(file, spec.fileKey);
    if (keyFile) {
      const path = configPath(file, keyFile, context.env);
      checkPathInProject(file, spec.fileKey, path);
      const text = await readSecretFile(path, `${spec.fileKey} in ${displayPath(file.path)}`, context, warnings);
      return { text, source: { kind: file.kind, name: `${file.path} (${spec.fileKey} ${path})` }, label: `${spec.fileKey} ${displayPath(path)}` };
    }
  }
  return undefined;
}

/** The signing key, parsed once on first use; a malformed one is a ConfigError naming the setting. */
function lazySigningKey(text: string, label: string): () => Promise<SigningKey> {
  let parsed: Promise<SigningKey> | undefined;
  return () =>
    (parsed ??= import('../core/signing/keys.js').then(({ SigningKey }) => {
      try {
        return SigningKey.fromHex(text, label);
      } catch (error) {
        if (error instanceof SigningKeyError) throw new ConfigError(error.message, { field: label });
        throw error;
      }
    }));
}

/** `--on-error`'s mode; a bad value is a usage error from the flag, a configuration error from elsewhere. */
function onErrorMode(value: string | undefined, source: SettingSource | undefined): OnErrorMode {
  if (value === undefined) return 'raise';
  if ((ON_ERROR_MODES as readonly string[]).includes(value)) return value as OnErrorMode;
  const message = `${source!.kind === 'flag' ? '--on-error' : source!.name} must be one of ${ON_ERROR_MODES.join(', ')}, got "${value}"`;
  throw source!.kind === 'flag' ? new UsageError(message, { field: '--on-error' }) : new ConfigError(message, { field: 'onError' });
}

/** The longest `--timeout`: an hour; a request that needs longer is stuck. */
const MAX_TIMEOUT_MS = 3_600_000;

/**
 * A timeout in ms from seconds (`30`, `2.5`) or a duration (`1500ms`, `90s`, `2m`), within 1 ms and
 * an hour; undefined when it is neither.
 */
export function parseTimeout(value: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/.exec(value);
  if (!match) return undefined;
  const ms = Number(match[1]) * (match[2] === 'ms' ? 1 : match[2] === 'm' ? 60_000 : 1000);
  return ms >= 1 && ms <= MAX_TIMEOUT_MS ? Math.round(ms) : undefined;
}

/** The timeout setting; a bad value is a usage error from the flag, a configuration error from elsewhere. */
function timeoutSetting(value: string | undefined, source: SettingSource | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseTimeout(value);
  if (ms !== undefined) return ms;
  const message = `${source!.kind === 'flag' ? '--timeout' : source!.name} must be seconds or a duration (30, 90s, 2m, 1500ms) of at most an hour, got "${value}"`;
  throw source!.kind === 'flag' ? new UsageError(message, { field: '--timeout' }) : new ConfigError(message, { field: 'timeout' });
}

/** authorised_by from the first config file that sets it; the attest commands' flags win over it (attest/build.ts). */
function authorisedBy(files: readonly ConfigFile[], sources: Partial<Record<SettingName, SettingSource>>): AuthorisedBySetting | undefined {
  for (const file of files) {
    const value = file.values.authorisedBy;
    if (value === undefined || value === null) continue;
    sources.authorisedBy = { kind: file.kind, name: `${file.path} (authorisedBy)` };
    return authorisedByFromConfig(value, file);
  }
  return undefined;
}

/**
 * Loads the settings from flags, environment, the config files and the user's host pins.
 * @throws UsageError for a bad flag value; ConfigError (78) for an unreadable or malformed config
 *   file or key file, or a key file a project config may not name
 */
export async function loadSettings(context: SettingsContext): Promise<Settings> {
  const { flags, env } = context;
  const warnings: string[] = [];
  const { files, user } = await readConfigFiles(context, warnings);
  warnAboutFiles(files, warnings);
  const sources: Partial<Record<SettingName, SettingSource>> = {};
  const pick = (name: SettingName, flagValue: string | undefined, isPath = false) => pickSetting(name, flagValue, context, files, sources, isPath);

  const baseUrl = pick('baseUrl', flags.baseUrl);
  const userBaseUrl = sources.baseUrl?.kind === 'project' && user ? configString(user, 'baseUrl') : undefined;
  const dataDir = pick('dataDir', flags.dataDir, true) ?? defaultDataDir(env);
  sources.dataDir ??= { kind: 'default', name: '$XDG_DATA_HOME/govctl' };
  // The local store writes there: a repository may not aim it at the user's other files.
  const project = files.find((file) => file.kind === 'project');
  if (project && sources.dataDir.kind === 'project') checkPathInProject(project, 'dataDir', dataDir);
  const onErrorValue = pick('onError', flags.onError);
  const onError = onErrorMode(onErrorValue, sources.onError);
  if (onErrorValue === undefined) sources.onError = { kind: 'default', name: 'raise' };

  const apiKey = await loadSecret(
    { flagValue: flags.apiKeyFile, flag: '--api-key-file', setting: 'apiKey', inlineKey: 'apiKey', fileKey: 'apiKeyFile' },
    files,
    context,
    warnings,
  );
  if (apiKey) sources.apiKey = apiKey.source;
  if (apiKey?.text === '') throw new ConfigError(`the API key from ${apiKey.source.name} is empty`, { field: 'apiKey' });

  // Only the signing key's text is read here; it is parsed (and a malformed one reported) by the command that signs.
  const signing = await loadSecret(
    { flagValue: flags.signingKeyFile, flag: '--signing-key-file', setting: 'signingKey', inlineKey: 'signingKey', fileKey: 'signingKeyFile' },
    files,
    context,
    warnings,
  );
  if (signing) sources.signingKey = signing.source;

  const explicit = files.find((file) => file.kind === 'explicit');
  const settings: Settings = {
    workspaceId: pick('workspaceId', flags.workspace),
    systemName: pick('systemName', flags.system),
    agentName: pick('agentName', flags.agent),
    ledgerKey: pick('ledgerKey', flags.ledgerKey),
    timeout: timeoutSetting(pick('timeout', flags.timeout), sources.timeout),
    onError,
    dataDir,
    hasSigningKey: signing !== undefined,
    signingKey: signing ? lazySigningKey(signing.text, signing.label) : () => Promise.resolve(undefined),
    sources,
    files: { ...(project && { project: project.path }), ...(user && { user: user.path }), ...(explicit && { explicit: explicit.path }) },
    trustedHosts: trustedHosts(env, user),
    warnings,
    baseUrl,
    apiKey: apiKey?.text,
    authorisedBy: authorisedBy(files, sources),
    ...(userBaseUrl && { userBaseUrl }),
  };
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
  if (session) by.sessionId = session;
  return by;
}
