/**
 * What a project config may do with the user's secrets (docs/security.md "A repository's
 * configuration is untrusted input"), modelled on npm's per-registry auth and gh's per-host
 * tokens: a credential goes only to a host its owner named.
 *
 * - An API key from a flag, the environment, the user config or `--config FILE` is sent only to a
 *   base URL from one of those, or to a host pinned by the user (`trustedHosts` in the user config,
 *   written by `govctl config trust-host URL`, or `GOVCTL_TRUSTED_HOSTS` for a pipeline).
 * - A key that the project config itself holds (inline or in a file inside the project) belongs to
 *   whoever wrote the project, and may go to the project's host.
 * - A project config names secret files only inside its own root, symlinks resolved.
 * - A project config may not switch to the embedded store while the user's own API key is set.
 */
import { realpathSync } from 'node:fs';
import { relative, isAbsolute, sep } from 'node:path';
import { isGovctlVariable } from './environment.js';
import { ConfigError } from './errors.js';
import { displayPath, type ConfigFile } from './config-files.js';
import { displayUrl } from './terminal-text.js';

/** The environment variable a pipeline pins hosts with: origins, separated by commas or spaces. */
export const TRUSTED_HOSTS_ENV = 'GOVCTL_TRUSTED_HOSTS';

/** The user config key that pins hosts. */
export const TRUSTED_HOSTS_KEY = 'trustedHosts';

/** A pinned host and where the pin is. */
export interface TrustedHost {
  /** the origin: `https://governance.example.com`, `http://127.0.0.1:8080` */
  origin: string;
  /** `GOVCTL_TRUSTED_HOSTS`, or the user config's path */
  from: string;
}

/**
 * The origin (scheme, host, port) a base URL sends to; the unit of trust, as for a browser's
 * cookies. Undefined for anything that is not an http(s) URL.
 */
export function originOf(value: string): string | undefined {
  try {
    const url = new URL(value.trim());
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The hosts the user pinned: `GOVCTL_TRUSTED_HOSTS` and the user config's `trustedHosts`. Only
 * these two places count: a pin in a project config would let the repository trust itself.
 * @throws ConfigError (78) for an entry that is not an http(s) URL
 */
export function trustedHosts(env: NodeJS.ProcessEnv, user: ConfigFile | undefined): TrustedHost[] {
  const hosts: TrustedHost[] = [];
  const add = (value: string, from: string) => {
    const origin = originOf(value);
    if (origin === undefined) {
      // Shown as typed (`127.0.0.1:8080` is no URL to hide parts of), unless it may hold a password.
      throw new ConfigError(`${from} holds "${value.includes('@') ? displayUrl(value) : value}", which is not an http(s) URL`, {
        field: TRUSTED_HOSTS_KEY,
        hint: 'pin a host as its URL, e.g. https://governance.example.com',
      });
    }
    hosts.push({ origin, from });
  };
  for (const value of (env[TRUSTED_HOSTS_ENV] ?? '').split(/[\s,]+/)) if (value !== '') add(value, TRUSTED_HOSTS_ENV);
  const pinned = user?.values[TRUSTED_HOSTS_KEY];
  if (pinned !== undefined && pinned !== null) {
    const where = `${TRUSTED_HOSTS_KEY} in ${displayPath(user!.path)}`;
    if (!Array.isArray(pinned) || !pinned.every((value) => typeof value === 'string')) {
      throw new ConfigError(`${where} must be a list of URLs`, {
        field: TRUSTED_HOSTS_KEY,
        hint: 'e.g. ["https://governance.example.com"]; see `govctl config trust-host`',
      });
    }
    for (const value of pinned) add(value, where);
  }
  return hosts;
}

/** Where the base URL and the API key of a remote connection came from (settings' sources). */
export interface CredentialRoute {
  baseUrl: string;
  /** the base URL's source kind and name (`project`, `./.govctlrc.json (baseUrl)`) */
  baseUrlSource: { kind: string; name: string };
  apiKeySource: { kind: string; name: string };
  trustedHosts: readonly TrustedHost[];
  /** the base URL the user's own config names, shadowed by the project's (for the message) */
  userBaseUrl?: string;
}

/**
 * Refuses to send a user's API key to a host that only the project config named.
 * @throws ConfigError (78) naming both hosts and how to trust the project's
 */
export function checkCredentialRoute(route: CredentialRoute): void {
  if (route.baseUrlSource.kind !== 'project') return; // the user named the host
  if (route.apiKeySource.kind === 'project') return; // the project's own key, to the project's host
  const origin = originOf(route.baseUrl);
  if (origin !== undefined && route.trustedHosts.some((host) => host.origin === origin)) return;
  // The user config names the same host: the user named it too.
  if (origin !== undefined && route.userBaseUrl !== undefined && originOf(route.userBaseUrl) === origin) return;
  const shown = origin ?? displayUrl(route.baseUrl);
  const own = route.userBaseUrl !== undefined ? `; your user config names ${originOf(route.userBaseUrl) ?? displayUrl(route.userBaseUrl)}` : '';
  throw new ConfigError(
    `the project config ${displayPath(route.baseUrlSource.name.replace(/ \(baseUrl\)$/, ''))} points to ${shown}, ` +
      `and the API key from ${route.apiKeySource.name} is sent only to hosts you named${own}`,
    {
      field: 'baseUrl',
      hint:
        `if you trust ${shown} with that key, run \`govctl config trust-host ${shown}\` (a pipeline: set ${TRUSTED_HOSTS_ENV}=${shown}), ` +
        'or give --base-url / SERVICE_BASE_URL yourself',
    },
  );
}

/**
 * Refuses a project config's `baseUrl: local` while an API key of the user's own is set (from a
 * flag, the environment, the user config or `--config FILE`): the user set up a service, and a
 * repository may not switch the commands, a gate above all, to a store it can ship itself (a pull
 * request adding `{"baseUrl": "local", "dataDir": ".gov"}` and a store whose gates pass).
 * @throws ConfigError (78) naming the project config and where the key came from
 */
export function checkStoreChoice(route: Pick<CredentialRoute, 'baseUrlSource'> & { apiKeySource?: CredentialRoute['apiKeySource'] }): void {
  if (route.baseUrlSource.kind !== 'project') return; // the user chose the local store
  if (route.apiKeySource === undefined || route.apiKeySource.kind === 'project') return; // no service of the user's
  throw new ConfigError(
    `the project config ${displayPath(route.baseUrlSource.name.replace(/ \(baseUrl\)$/, ''))} chooses the local store (baseUrl: local) ` +
      `while the API key from ${route.apiKeySource.name} is set for a service; a repository may not choose the store your commands read`,
    {
      field: 'baseUrl',
      hint: 'give --base-url local (or GOVCTL_BASE_URL=local) yourself to use the local store, or --base-url / SERVICE_BASE_URL for the service',
    },
  );
}

/**
 * A base URL and an API key that both come from the environment come from the same family:
 * `GOVCTL_BASE_URL` with `GOVCTL_API_KEY`, `SERVICE_BASE_URL` with `SERVICE_API_KEY`. The
 * `GOVCTL_*` names exist so that a pipeline whose `SERVICE_*` variables belong to another service
 * can run govctl beside it; mixing them would send that service's key to govctl's host (or
 * govctl's key to that service's).
 * @throws ConfigError (78) naming both variables and the one to set
 */
export function checkEnvironmentPairing(route: Pick<CredentialRoute, 'baseUrlSource' | 'apiKeySource'>): void {
  const { baseUrlSource: url, apiKeySource: key } = route;
  if (url.kind !== 'env' || key.kind !== 'env') return;
  if (isGovctlVariable(url.name) === isGovctlVariable(key.name)) return;
  const wanted = isGovctlVariable(url.name) ? 'GOVCTL_API_KEY' : 'SERVICE_API_KEY';
  throw new ConfigError(`the base URL is from ${url.name} and the API key from ${key.name}; a key is sent only with a base URL of its own family`, {
    field: 'apiKey',
    hint: `set ${wanted} (GOVCTL_* names win over SERVICE_* ones), or give --api-key-file FILE / --base-url URL`,
  });
}

/** Whether `path` is `root` or inside it. */
function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..' + sep) && rel !== '..' && !isAbsolute(rel));
}

function realpathOr(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * A path named by a project config (a key file, the data directory) must lie inside the project
 * root, as written and after resolving symlinks (a link in the repository to `~/.git-credentials`
 * is as far out as the path). Paths named by the user (flags, the user config, `--config`) may be
 * anywhere.
 * @throws ConfigError (78) naming the key and the path, never a file's contents
 */
export function checkPathInProject(file: ConfigFile, key: string, path: string): void {
  if (file.kind !== 'project') return;
  const root = realpathOr(file.root) ?? file.root;
  const real = realpathOr(path);
  if (isInside(file.root, path) && (real === undefined || isInside(root, real))) return;
  throw new ConfigError(
    `${key} in the project config ${displayPath(file.path)} names ${displayPath(path)}${real !== undefined && real !== path ? ` (${displayPath(real)})` : ''}, ` +
      `outside the project ${displayPath(file.root)}; a project config may name files only inside its own directory`,
    {
      field: key,
      hint:
        key === 'dataDir'
          ? 'give --data-dir or GOVCTL_DATA_DIR, or set dataDir in your user config'
          : 'give the key with SERVICE_API_KEY or --api-key-file (the signing key: SERVICE_SIGNING_KEY or --signing-key-file), or name the file in your user config',
    },
  );
}
