/**
 * Every environment variable the command line reads, in one table: `govctl help environment`
 * prints it, settings.ts reads the settings' variables through {@link settingFromEnv}, and a test
 * checks that no source file reads a variable this table does not list.
 *
 * The specification names the settings' variables `SERVICE_*`. Each also has a `GOVCTL_*` name,
 * which wins when both are set: a pipeline whose `SERVICE_API_KEY` belongs to something else can
 * give govctl its own without renaming anything. The API key and the base URL must then come from
 * the same family (trust.ts): a key meant for another service never goes to govctl's host, nor
 * govctl's key to another service's.
 */
import type { SettingName } from './settings.js';

/** One environment variable and what it does. */
export interface EnvironmentVariable {
  /** the name govctl reads first */
  name: string;
  /** the specification's name, read when `name` is unset or empty (`SERVICE_*`) */
  alias?: string;
  /** the setting it feeds (design/cli.md "Settings") */
  setting?: SettingName;
  /** what it does, for `govctl help environment` */
  what: string;
  /** what it is for: a setting, the terminal, the files, the network */
  group: 'settings' | 'trust' | 'output' | 'files' | 'network' | 'ci';
}

export const ENVIRONMENT: readonly EnvironmentVariable[] = [
  {
    name: 'GOVCTL_BASE_URL',
    alias: 'SERVICE_BASE_URL',
    setting: 'baseUrl',
    group: 'settings',
    what: 'the service URL, or "local" for the embedded store (--base-url)',
  },
  {
    name: 'GOVCTL_API_KEY',
    alias: 'SERVICE_API_KEY',
    setting: 'apiKey',
    group: 'settings',
    what: 'the API key (a secret; never a flag value: --api-key-file FILE|-)',
  },
  {
    name: 'GOVCTL_WORKSPACE_ID',
    alias: 'SERVICE_WORKSPACE_ID',
    setting: 'workspaceId',
    group: 'settings',
    what: "the workspace id (--workspace; default: the API key's)",
  },
  { name: 'GOVCTL_SYSTEM_NAME', alias: 'SERVICE_SYSTEM_NAME', setting: 'systemName', group: 'settings', what: 'the AI system name (--system)' },
  {
    name: 'GOVCTL_AGENT_NAME',
    alias: 'SERVICE_AGENT_NAME',
    setting: 'agentName',
    group: 'settings',
    what: 'the agent name of attestations (--agent; default: the system)',
  },
  {
    name: 'GOVCTL_SIGNING_KEY',
    alias: 'SERVICE_SIGNING_KEY',
    setting: 'signingKey',
    group: 'settings',
    what: 'the signing key, 64 hex characters (a secret; --signing-key-file FILE|-)',
  },
  {
    name: 'GOVCTL_ON_ERROR',
    alias: 'SERVICE_ON_ERROR',
    setting: 'onError',
    group: 'settings',
    what: 'what a failed write does: warn, raise or silent (--on-error)',
  },
  { name: 'GOVCTL_DATA_DIR', setting: 'dataDir', group: 'settings', what: 'the directory of the embedded store (--data-dir)' },
  { name: 'GOVCTL_LEDGER_KEY', setting: 'ledgerKey', group: 'settings', what: 'the pinned verifier key of the transparency log (--ledger-key)' },
  {
    name: 'GOVCTL_TIMEOUT',
    setting: 'timeout',
    group: 'settings',
    what: 'how long each request may take: seconds or a duration, 30, 90s, 2m (--timeout; default 15 s)',
  },
  { name: 'DATABASE_URL', group: 'settings', what: '`serve` and `admin`: the PostgreSQL database (a postgres:// URL) when --db is not given' },
  {
    name: 'GOVCTL_LOG_KEY_FILE',
    group: 'settings',
    what: "`serve` and `admin`: the transparency log's key file when --log-key is not given (required with PostgreSQL)",
  },
  {
    name: 'USER',
    alias: 'LOGNAME',
    group: 'settings',
    what: '`admin gates set|unset`: who makes the change, as the transparency log records it, when --by is not given',
  },
  { name: 'GOVCTL_TRUSTED_HOSTS', group: 'trust', what: 'hosts your API key may go to when a project config names them (URLs, comma-separated)' },
  { name: 'CI', group: 'ci', what: 'set (not empty, 0 or false): with nothing configured, fail (78) instead of using the local store' },
  { name: 'GITHUB_STEP_SUMMARY', group: 'ci', what: '`gates check --format github` appends a Markdown summary to this file' },
  { name: 'NO_COLOR', group: 'output', what: 'any value: no colour (--no-color)' },
  { name: 'FORCE_COLOR', group: 'output', what: 'colour even when piped: 1 basic, 2 256 colours, 3 truecolor; 0 or false: none' },
  { name: 'TERM', group: 'output', what: '"dumb": no colour' },
  { name: 'COLORTERM', group: 'output', what: '"truecolor" or "24bit": 24-bit colour on a terminal' },
  { name: 'HOME', group: 'files', what: 'the home directory (the default of the XDG directories)' },
  { name: 'XDG_CONFIG_HOME', group: 'files', what: 'the user config is $XDG_CONFIG_HOME/govctl/config.json (default ~/.config)' },
  { name: 'XDG_DATA_HOME', group: 'files', what: 'the embedded store is in $XDG_DATA_HOME/govctl (default ~/.local/share)' },
  { name: 'XDG_CACHE_HOME', group: 'files', what: 'start-up code caches in $XDG_CACHE_HOME/govctl (default ~/.cache)' },
  { name: 'GOVCTL_NO_HELP_CACHE', group: 'files', what: 'set: render `govctl --help` instead of printing the copy the build made' },
  { name: 'HTTPS_PROXY', alias: 'https_proxy', group: 'network', what: 'the proxy for https:// services (the lower-case name wins)' },
  { name: 'HTTP_PROXY', alias: 'http_proxy', group: 'network', what: 'the proxy for http:// services (the lower-case name wins)' },
  { name: 'NO_PROXY', alias: 'no_proxy', group: 'network', what: 'hosts reached without the proxy (the lower-case name wins)' },
];

/** The table's entry of a setting. */
function entryOf(setting: SettingName): EnvironmentVariable | undefined {
  return ENVIRONMENT.find((entry) => entry.setting === setting);
}

function nonEmpty(env: NodeJS.ProcessEnv, name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * A setting's value from the environment and the variable it came from: the `GOVCTL_*` name when
 * set, else the specification's `SERVICE_*` name.
 */
export function settingFromEnv(env: NodeJS.ProcessEnv, setting: SettingName): { name: string; value: string } | undefined {
  const entry = entryOf(setting);
  if (!entry) return undefined;
  for (const name of [entry.name, entry.alias]) {
    const value = nonEmpty(env, name);
    if (value !== undefined) return { name: name!, value };
  }
  return undefined;
}

/** The variables of a setting, as messages name them: `GOVCTL_API_KEY or SERVICE_API_KEY`. */
export function settingVariables(setting: SettingName): string | undefined {
  const entry = entryOf(setting);
  if (!entry) return undefined;
  return entry.alias ? `${entry.alias} or ${entry.name}` : entry.name;
}

/** Whether a variable name is a `GOVCTL_*` one (its family, for pairing a key with its host). */
export function isGovctlVariable(name: string): boolean {
  return name.startsWith('GOVCTL_');
}
