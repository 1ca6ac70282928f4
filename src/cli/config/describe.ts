/**
 * What `govctl config show` reports: every setting of the table of docs/cli.md "Settings", its effective value
 * with secrets masked, and where it came from. Pure apart from parsing the signing key (to show its
 * public key instead of any of its characters).
 */
import { ConfigError } from '../errors.js';
import { isCI, resolveConnection } from '../factory.js';
import { SETTING_NAMES, displayPath, isFileSource, type SettingName, type Settings, type SourceKind } from '../settings.js';
import { displayUrl } from '../terminal-text.js';

/** Where a value came from: a flag, the environment, a config file, a default, or nowhere. */
export type ShownSource = SourceKind | 'unset';

/** One setting as `config show` reports it. */
export interface ShownSetting {
  /** the value as it may be shown (secrets masked); null when unset */
  value: string | null;
  source: ShownSource;
  /** the flag, the environment variable, the config file's path and key, or what the default is */
  origin: string;
}

/** Where commands go with these settings. */
export type ShownConnection = { kind: 'remote'; base_url: string } | { kind: 'local'; data_dir: string } | { kind: 'error'; message: string };

/** The `config show --json` document (documented in the command's help and docs). */
export interface ConfigReport {
  settings: Record<SettingName, ShownSetting>;
  files: { project: string | null; user: string; user_exists: boolean; explicit: string | null };
  /** the hosts the user pinned for their credentials, and where each pin is */
  trusted_hosts: { origin: string; from: string }[];
  connection: ShownConnection;
}

/**
 * An API key as it may be shown: its type prefix (`gk_`) and last four characters, `gk_…ab12`, so
 * that two keys can be told apart; `****ab12` without a prefix; `****` when the key is too short
 * for four characters to be safe to show.
 */
export function maskApiKey(key: string): string {
  if (key.length < 16) return '****';
  const last4 = key.slice(-4);
  const prefix = /^[A-Za-z]{1,8}_/.exec(key)?.[0];
  return prefix ? `${prefix}…${last4}` : `****${last4}`;
}

/** The signing key as it may be shown: only its Ed25519 public key, which reveals nothing secret. */
async function showSigningKey(settings: Settings): Promise<string> {
  try {
    const key = await settings.signingKey();
    if (!key) return 'set';
    const hex = key.publicKeyHex;
    return `set (public key ${hex.slice(0, 8)}…${hex.slice(-8)})`;
  } catch (error) {
    return error instanceof ConfigError ? `set, but malformed: ${error.message}` : 'set, but unreadable';
  }
}

/** The text of a default, for settings that are not set anywhere. */
function defaultOf(setting: SettingName, settings: Settings, env: NodeJS.ProcessEnv): { value: string | null; origin: string } | undefined {
  switch (setting) {
    case 'baseUrl':
      if (settings.apiKey !== undefined) return { value: null, origin: 'none: required with an API key' };
      if (isCI(env)) return { value: null, origin: 'none: CI is set, so the local store is not used' };
      return { value: 'local', origin: 'the embedded store (no API key configured)' };
    case 'workspaceId':
      return { value: null, origin: "the API key's workspace (GET /api/me)" };
    case 'agentName':
      return { value: settings.systemName ?? null, origin: 'the system name' };
    case 'signingKey':
      return { value: null, origin: 'none: nothing is signed' };
    case 'timeout':
      return { value: '15 s', origin: "the client library's timeout per request" };
    default:
      return undefined;
  }
}

/** The origin of a source for people: config file paths with the home directory as `~`. */
function originText(kind: SourceKind, name: string): string {
  return isFileSource(kind) ? displayPath(name) : name;
}

/** Builds the report of `config show`. */
export async function describeConfig(settings: Settings, env: NodeJS.ProcessEnv, userConfig: { path: string; exists: boolean }): Promise<ConfigReport> {
  const shown = {} as Record<SettingName, ShownSetting>;
  for (const setting of SETTING_NAMES) {
    const source = settings.sources[setting];
    let value: string | null;
    switch (setting) {
      case 'apiKey':
        value = settings.apiKey === undefined ? null : maskApiKey(settings.apiKey);
        break;
      case 'signingKey':
        value = settings.hasSigningKey ? await showSigningKey(settings) : null;
        break;
      case 'authorisedBy': {
        const by = settings.authorisedBy;
        value = by ? [by.identity, by.role && `role ${by.role}`, by.sessionId && `session ${by.sessionId}`].filter(Boolean).join(', ') : null;
        break;
      }
      case 'timeout':
        value = settings.timeout === undefined ? null : `${settings.timeout / 1000} s`;
        break;
      case 'baseUrl':
        // A URL's userinfo or query may hold a secret (a token): never shown.
        value = settings.baseUrl === undefined ? null : displayUrl(settings.baseUrl);
        break;
      default:
        value = settings[setting] ?? null;
    }
    if (source && source.kind !== 'default') {
      shown[setting] = { value, source: source.kind, origin: originText(source.kind, source.name) };
      continue;
    }
    const fallback = defaultOf(setting, settings, env);
    if (source)
      shown[setting] = {
        value,
        source: 'default',
        origin: setting === 'dataDir' ? '$XDG_DATA_HOME/govctl' : setting === 'onError' ? 'raise in the CLI' : source.name,
      };
    else if (fallback) shown[setting] = { value: fallback.value, source: 'default', origin: fallback.origin };
    else shown[setting] = { value: null, source: 'unset', origin: '' };
  }

  let connection: ShownConnection;
  try {
    const resolved = resolveConnection(settings, env);
    connection = resolved.kind === 'remote' ? { kind: 'remote', base_url: displayUrl(resolved.baseUrl) } : { kind: 'local', data_dir: resolved.dataDir };
  } catch (error) {
    connection = { kind: 'error', message: error instanceof Error ? error.message : String(error) };
  }
  return {
    settings: shown,
    files: { project: settings.files.project ?? null, user: userConfig.path, user_exists: userConfig.exists, explicit: settings.files.explicit ?? null },
    trusted_hosts: settings.trustedHosts.map((host) => ({ origin: host.origin, from: host.from })),
    connection,
  };
}
