/**
 * `govctl config init`: writes a starter config file, by default the user config
 * (`$XDG_CONFIG_HOME/govctl/config.json`), with `--project` `./.govctlrc.json`. It holds the
 * settings given as global flags with the command, and nothing else: a default written into the
 * file would read as the author's choice, and in a project config it would override each user's own
 * (a project's `onError: raise` over a user's `warn`).
 *
 * It never overwrites a file without `--force`, writes mode 0600 (the user config's directory
 * 0700), and never writes an API key: it records `apiKeyFile`, the path of a key file, from
 * `--api-key-file FILE`. Environment variables are not copied (they are often CI secrets).
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { Command } from 'commander';
import { addExamples } from '../command-kit.js';
import { ConfigError, UsageError } from '../errors.js';
import type { Factory, GlobalOptions } from '../factory.js';
import { printJson } from '../render.js';
import { displayPath, parseTimeout, userConfigPath } from '../settings.js';

export interface ConfigInitOptions {
  json: boolean;
  /** write `./.govctlrc.json` instead of the user config */
  project: boolean;
  /** replace an existing file */
  force: boolean;
}

/** The project config file `config init --project` writes (one of cosmiconfig's places for `govctl`). */
export const PROJECT_CONFIG_FILE = '.govctlrc.json';

/** The starter's keys, in the order written: the settings, with files instead of secrets. */
export const STARTER_KEYS = ['baseUrl', 'apiKeyFile', 'workspaceId', 'systemName', 'agentName', 'signingKeyFile', 'onError', 'dataDir', 'timeout'] as const;

/** The settings given, and only those. */
export type StarterConfig = Partial<Record<(typeof STARTER_KEYS)[number], string>>;

/** What `config init --json` prints. */
export interface ConfigInitReport {
  path: string;
  scope: 'user' | 'project';
  /** true when an existing file was replaced (`--force`) */
  replaced: boolean;
  config: StarterConfig;
}

export function createConfigInitCommand(factory: Factory): Command {
  const command = new Command('init')
    .description('write a starter config file (the user config, or ./.govctlrc.json with --project)')
    .option('--project', `write ./${PROJECT_CONFIG_FILE} in the working directory instead of the user config`)
    .option('--force', 'replace the file if it exists')
    .action(async (flags: { project?: boolean; force?: boolean }) =>
      run({ json: factory.globals.json === true, project: flags.project === true, force: flags.force === true }, factory),
    );
  command.addHelpText(
    'after',
    '\nThe file holds the settings given as global flags with the command, and nothing else (--base-url,\n' +
      '--workspace, --system, --agent, --on-error, --data-dir, --timeout, and --api-key-file / --signing-key-file\n' +
      'as paths: the file never holds a key); no default is written as if chosen. Add more later with\n' +
      '`govctl config set KEY VALUE` (the user config). The file is written with mode 0600.\n' +
      'It prints the path; --json prints {path, scope, replaced, config}.\n',
  );
  return addExamples(command, [
    'govctl config init --base-url https://governance.example.com --api-key-file ~/.config/govctl/api-key',
    'govctl config init --project --system loan-scorer',
    'govctl config init --force && govctl config show',
  ]);
}

/** A path setting for the file: absolute in the user config, as given (relative to the project) in a project config. */
function pathValue(value: string, scope: 'user' | 'project', cwd: string): string {
  return scope === 'project' && !isAbsolute(value) ? value : resolve(cwd, value);
}

/** The starter config from the global flags. */
export function starterConfig(globals: GlobalOptions, scope: 'user' | 'project', cwd: string): StarterConfig {
  for (const [flag, value] of [
    ['--api-key-file', globals.apiKeyFile],
    ['--signing-key-file', globals.signingKeyFile],
  ] as const) {
    if (value === '-') {
      throw new UsageError(`config init records the path of a key file, and ${flag} - is stdin`, {
        field: flag,
        hint: `give ${flag} FILE; the key itself is never written to a config file`,
      });
    }
  }
  if (globals.timeout !== undefined && parseTimeout(globals.timeout) === undefined) {
    throw new UsageError(`--timeout must be seconds or a duration (30, 90s, 2m, 1500ms) of at most an hour, got "${globals.timeout}"`, { field: '--timeout' });
  }
  const values: Record<(typeof STARTER_KEYS)[number], string | undefined> = {
    baseUrl: globals.baseUrl,
    apiKeyFile: globals.apiKeyFile && pathValue(globals.apiKeyFile, scope, cwd),
    workspaceId: globals.workspace,
    systemName: globals.system,
    agentName: globals.agent,
    signingKeyFile: globals.signingKeyFile && pathValue(globals.signingKeyFile, scope, cwd),
    onError: globals.onError,
    dataDir: globals.dataDir && pathValue(globals.dataDir, scope, cwd),
    timeout: globals.timeout,
  };
  const config: StarterConfig = {};
  for (const key of STARTER_KEYS) {
    const value = values[key];
    if (value !== undefined && value !== '') config[key] = value;
  }
  return config;
}

function errorCode(error: unknown): string | undefined {
  return (error as { code?: string }).code;
}

/**
 * Writes `text` to `path` with mode 0600: created exclusively (no overwrite), or with `force`
 * through a temporary file renamed over the old one, so a reader never sees half a file.
 * @returns whether an existing file was replaced
 */
export async function writePrivateFile(path: string, text: string, force: boolean): Promise<boolean> {
  try {
    const handle = await open(path, 'wx', 0o600);
    try {
      await handle.writeFile(text);
    } finally {
      await handle.close();
    }
    await chmod(path, 0o600); // the umask may have taken bits away; never added, but be exact
    return false;
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw error;
    if (!force) {
      throw new UsageError(`${displayPath(path)} already exists (an earlier \`config init\` or \`config set\` wrote it); not overwriting it`, {
        hint: 'change one setting with `govctl config set KEY VALUE` (`govctl config show` lists them), or give --force to replace the whole file',
      });
    }
  }
  const temp = join(dirname(path), `.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(text);
    } finally {
      await handle.close();
    }
    await chmod(temp, 0o600);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  return true;
}

export async function run(options: ConfigInitOptions, deps: Factory): Promise<void> {
  const scope = options.project ? 'project' : 'user';
  const path = options.project ? resolve(deps.cwd, PROJECT_CONFIG_FILE) : userConfigPath(deps.env);
  const config = starterConfig(deps.globals, scope, deps.cwd);
  const text = JSON.stringify(config, null, 2) + '\n';
  let replaced: boolean;
  try {
    if (scope === 'user') await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    replaced = await writePrivateFile(path, text, options.force);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new ConfigError(`cannot write ${displayPath(path)}: ${(error as Error).message}`, { hint: 'check the directory exists and is writable' });
  }
  if (options.json) {
    const report: ConfigInitReport = { path, scope, replaced, config };
    return printJson(deps.io.stdout, report);
  }
  await deps.io.stdout.write(`${path}\n`);
  const written = Object.keys(config);
  await deps.note(
    `${replaced ? 'replaced' : 'wrote'} ${displayPath(path)} (mode 600) with ${written.length ? written.join(', ') : 'no settings'}; ` +
      `${scope === 'user' ? 'add more with `govctl config set KEY VALUE`, then ' : ''}check with \`govctl config show\``,
  );
}
