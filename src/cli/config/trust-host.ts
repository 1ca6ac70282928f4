/**
 * `govctl config trust-host URL`: pins a host in the user config (`trustedHosts`), so that the API
 * key from the environment, a flag or the user config may go to it when a project config names it
 * (docs/security.md). `--remove` unpins. A pipeline sets GOVCTL_TRUSTED_HOSTS instead.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Command } from 'commander';
import { addExamples } from '../command-kit.js';
import { withoutBom } from '../config-files.js';
import { ConfigError, UsageError } from '../errors.js';
import type { Factory } from '../factory.js';
import { printJson } from '../render.js';
import { displayPath, userConfigPath } from '../settings.js';
import { originOf, TRUSTED_HOSTS_ENV, TRUSTED_HOSTS_KEY } from '../trust.js';
import { displayUrl } from '../terminal-text.js';
import { writePrivateFile } from './init.js';

/** What `config trust-host --json` prints. */
export interface TrustHostReport {
  path: string;
  origin: string;
  /** true when the pin was added (or removed with --remove); false when there was nothing to do */
  changed: boolean;
  trusted_hosts: string[];
}

export function createConfigTrustHostCommand(factory: Factory): Command {
  const command = new Command('trust-host')
    .description('let your API key go to a host that a project config names (pins it in the user config)')
    .argument('<url>', 'the service, e.g. https://governance.example.com (its scheme, host and port are pinned)')
    .option('--remove', 'unpin the host')
    .action(async (url: string, flags: { remove?: boolean }) => run(url, { json: factory.globals.json === true, remove: flags.remove === true }, factory));
  command.addHelpText(
    'after',
    `\nA project config (.govctlrc… found by searching upward) may name the service, but your API key (from\n` +
      `SERVICE_API_KEY, --api-key-file or the user config) goes only to hosts you named. This adds the host to\n` +
      `"${TRUSTED_HOSTS_KEY}" in the user config. A pipeline sets ${TRUSTED_HOSTS_ENV}=URL[,URL…] instead.\n`,
  );
  return addExamples(command, ['govctl config trust-host https://governance.example.com', 'govctl config trust-host --remove https://governance.example.com']);
}

/** The user config's object (an empty one when the file is missing or empty). */
export async function readUserObject(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = withoutBom(await readFile(path, 'utf8'));
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return {};
    throw new ConfigError(`cannot read the user config file ${displayPath(path)}`, { hint: 'fix its permissions' });
  }
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError(`the user config file ${displayPath(path)} is not valid JSON`, { hint: 'fix it first; nothing was changed' });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`the user config file ${displayPath(path)} must hold an object of settings`, { hint: 'fix it first; nothing was changed' });
  }
  return parsed as Record<string, unknown>;
}

export async function run(url: string, options: { json: boolean; remove: boolean }, deps: Factory): Promise<void> {
  const origin = originOf(url);
  if (origin === undefined)
    throw new UsageError(`"${displayUrl(url)}" is not an http(s) URL`, { hint: 'give the service URL, e.g. https://governance.example.com' });
  const path = userConfigPath(deps.env);
  const config = await readUserObject(path);
  const existing = config[TRUSTED_HOSTS_KEY];
  if (existing !== undefined && (!Array.isArray(existing) || !existing.every((value) => typeof value === 'string'))) {
    throw new ConfigError(`${TRUSTED_HOSTS_KEY} in ${displayPath(path)} must be a list of URLs`, { hint: 'fix it first; nothing was changed' });
  }
  const hosts = existing ?? [];
  const pinned = hosts.some((host) => originOf(host) === origin);
  const next = options.remove ? hosts.filter((host) => originOf(host) !== origin) : pinned ? hosts : [...hosts, origin];
  const changed = options.remove ? pinned : !pinned;
  if (changed) {
    // The last pin removed takes the key with it, as `config unset` would.
    if (next.length > 0) config[TRUSTED_HOSTS_KEY] = next;
    else delete config[TRUSTED_HOSTS_KEY];
    try {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      await writePrivateFile(path, JSON.stringify(config, null, 2) + '\n', true);
    } catch (error) {
      throw new ConfigError(`cannot write ${displayPath(path)}: ${(error as Error).message}`, { hint: 'check the directory exists and is writable' });
    }
  }
  if (options.json) {
    const report: TrustHostReport = { path, origin, changed, trusted_hosts: next };
    return printJson(deps.io.stdout, report);
  }
  await deps.io.stdout.write(`${origin}\n`);
  const what = options.remove ? (changed ? 'unpinned' : 'was not pinned:') : changed ? 'pinned' : 'already pinned:';
  await deps.note(`${what} ${origin} in ${displayPath(path)}${!options.remove ? '; your API key may now go to it when a project config names it' : ''}`);
}
