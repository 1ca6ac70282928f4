/**
 * `govctl config get|set|unset KEY`: read and change one key of the user config
 * (`$XDG_CONFIG_HOME/govctl/config.json`), as `git config` and `gh config` do. Keys are the config
 * file's (settings.ts `CONFIG_KEYS`), each value checked as the settings check it, so a file this
 * writes always loads. Secrets follow docs/security.md: `set apiKey` / `set signingKey` are refused
 * (a value on the command line shows in `ps` and shell history; `apiKeyFile` names a file instead),
 * and `get` shows a secret masked, never its value.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Command } from 'commander';
import { Ed25519NoteVerifier } from '../../core/index.js';
import { addExamples } from '../command-kit.js';
import { closestKey } from '../config-files.js';
import { ConfigError, UsageError } from '../errors.js';
import type { Factory } from '../factory.js';
import { printJson } from '../render.js';
import { CONFIG_KEYS, displayPath, ON_ERROR_MODES, parseTimeout, userConfigPath } from '../settings.js';
import { displayUrl, terminalText } from '../terminal-text.js';
import { originOf, TRUSTED_HOSTS_KEY } from '../trust.js';
import { maskApiKey } from './describe.js';
import { writePrivateFile } from './init.js';
import { readUserObject } from './trust-host.js';

/** The keys that hold a secret itself: never set from the command line, never printed. */
const SECRET_KEYS = new Set(['apiKey', 'signingKey']);

/** Keys holding a path: stored absolute (the user config's paths are the user's, anywhere). */
const PATH_KEYS = new Set(['apiKeyFile', 'signingKeyFile', 'dataDir']);

/** Every key `config get` and `unset` know: the config keys and the user config's pins. */
const KNOWN_KEYS: readonly string[] = [...CONFIG_KEYS, TRUSTED_HOSTS_KEY];

/** The key, or a usage error with a suggestion. */
function checkKey(key: string): string {
  if (KNOWN_KEYS.includes(key)) return key;
  const suggestion = closestKey(key, KNOWN_KEYS);
  throw new UsageError(`unknown config key "${terminalText(key)}"${suggestion ? `; did you mean "${suggestion}"?` : ''}`, {
    field: '<key>',
    hint: `the keys: ${KNOWN_KEYS.join(', ')}`,
  });
}

/** The value to store for a key, checked as loading the settings would check it. */
function valueFor(key: string, value: string, cwd: string): string {
  if (SECRET_KEYS.has(key)) {
    const file = key === 'apiKey' ? 'apiKeyFile' : 'signingKeyFile';
    const env = key === 'apiKey' ? 'GOVCTL_API_KEY (or SERVICE_API_KEY)' : 'GOVCTL_SIGNING_KEY (or SERVICE_SIGNING_KEY)';
    throw new UsageError(`config set does not take ${key}: a secret on the command line shows in \`ps\` and shell history`, {
      field: key,
      hint: `put it in a file only you can read (chmod 600) and run \`govctl config set ${file} FILE\`, or set ${env} from your secret manager`,
    });
  }
  if (key === TRUSTED_HOSTS_KEY) throw new UsageError('pin hosts with `govctl config trust-host URL`', { field: key });
  if (value.trim() === '') throw new UsageError(`${key} cannot be empty`, { field: key, hint: `to remove it: govctl config unset ${key}` });
  if (PATH_KEYS.has(key)) return resolve(cwd, value);
  switch (key) {
    case 'baseUrl':
      if (value !== 'local' && originOf(value) === undefined)
        throw new UsageError(`baseUrl must be an http(s) URL or local, got "${displayUrl(value)}"`, { field: key });
      if (value !== 'local') {
        const url = new URL(value);
        if (url.username !== '' || url.password !== '')
          throw new UsageError('baseUrl may not hold a user name or password', { field: key, hint: 'the API key goes in apiKeyFile or the environment' });
      }
      return value;
    case 'onError':
      if (!(ON_ERROR_MODES as readonly string[]).includes(value))
        throw new UsageError(`onError must be one of ${ON_ERROR_MODES.join(', ')}, got "${value}"`, { field: key });
      return value;
    case 'timeout':
      if (parseTimeout(value) === undefined)
        throw new UsageError(`timeout must be seconds or a duration (30, 90s, 2m, 1500ms) of at most an hour, got "${value}"`, { field: key });
      return value;
    case 'ledgerKey':
      try {
        Ed25519NoteVerifier.fromVerifierKey(value.trim());
      } catch (error) {
        throw new UsageError(`ledgerKey is not a log verifier key (${(error as Error).message})`, {
          field: key,
          hint: 'it looks like <origin>+<8 hex digits>+<base64>, as `govctl admin init` prints it',
        });
      }
      return value.trim();
    default:
      return value;
  }
}

/** A stored value as it may be printed: a secret masked, anything else as stored. */
function shownValue(key: string, value: unknown): string {
  if (key === 'apiKey') return typeof value === 'string' ? maskApiKey(value) : '****';
  if (key === 'signingKey') return 'set (hidden; `govctl config show` shows its public key)';
  if (key === 'baseUrl' && typeof value === 'string') return displayUrl(value);
  return typeof value === 'string' ? value : JSON.stringify(value);
}

async function save(path: string, config: Record<string, unknown>): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await writePrivateFile(path, JSON.stringify(config, null, 2) + '\n', true);
  } catch (error) {
    throw new ConfigError(`cannot write ${displayPath(path)}: ${(error as Error).message}`, { hint: 'check the directory exists and is writable' });
  }
}

export function createConfigGetCommand(factory: Factory): Command {
  const command = new Command('get')
    .description('print one key of the user config (a secret masked)')
    .argument('<key>', `one of: ${KNOWN_KEYS.join(', ')}`)
    .action(async (key: string) => {
      checkKey(key);
      const path = userConfigPath(factory.env);
      const config = await readUserObject(path);
      const stored = config[key];
      const value = stored === undefined || stored === null ? null : shownValue(key, stored);
      if (factory.globals.json === true) return printJson(factory.io.stdout, { path, key, value });
      if (value !== null) await factory.io.stdout.write(`${terminalText(value)}\n`);
      else if ((key === 'apiKey' || key === 'signingKey') && typeof config[`${key}File`] === 'string') {
        // The secret itself is never in the user config (`config set` names a file): say where it is.
        await factory.note(`${key} is not set in ${displayPath(path)}; ${key}File names the file it is read from (\`govctl config get ${key}File\`)`);
      } else await factory.note(`${key} is not set in ${displayPath(path)} (\`govctl config show\` shows the value in effect and where it comes from)`);
    });
  command.addHelpText(
    'after',
    '\nThe user config only; `govctl config show` shows every setting in effect. An unset key prints nothing (exit 0).\n--json prints {path, key, value} (value null when unset).\n',
  );
  return addExamples(command, ['govctl config get baseUrl', 'govctl config get apiKeyFile']);
}

export function createConfigSetCommand(factory: Factory): Command {
  const command = new Command('set')
    .description('set one key of the user config (never a secret itself: apiKeyFile names a file)')
    .argument('<key>', 'the key, e.g. baseUrl')
    .argument('<value>', 'its value (paths are stored absolute)')
    .action(async (key: string, raw: string) => {
      checkKey(key);
      const value = valueFor(key, raw, factory.cwd);
      const path = userConfigPath(factory.env);
      const config = await readUserObject(path);
      const changed = config[key] !== value;
      if (changed) {
        config[key] = value;
        await save(path, config);
      }
      if (factory.globals.json === true) return printJson(factory.io.stdout, { path, key, value: shownValue(key, value), changed });
      await factory.note(`${changed ? 'set' : 'already set:'} ${key} in ${displayPath(path)}`);
    });
  command.addHelpText(
    'after',
    '\nThe value is checked as the settings check it (baseUrl an http(s) URL or local; onError warn|raise|silent;\n' +
      'timeout 30, 90s, 2m). apiKey and signingKey are refused: put the key in a file (chmod 600) and set apiKeyFile or\n' +
      'signingKeyFile, or use GOVCTL_API_KEY / GOVCTL_SIGNING_KEY. The file is written with mode 0600.\n' +
      '--json prints {path, key, value, changed}.\n',
  );
  return addExamples(command, [
    'govctl config set baseUrl https://governance.example.com',
    'govctl config set apiKeyFile ~/.config/govctl/api-key',
    'govctl config set timeout 30s',
  ]);
}

export function createConfigUnsetCommand(factory: Factory): Command {
  const command = new Command('unset')
    .description('remove one key from the user config')
    .argument('<key>', 'the key, e.g. systemName')
    .action(async (key: string) => {
      checkKey(key);
      const path = userConfigPath(factory.env);
      const config = await readUserObject(path);
      const changed = Object.hasOwn(config, key);
      if (changed) {
        delete config[key];
        await save(path, config);
      }
      if (factory.globals.json === true) return printJson(factory.io.stdout, { path, key, changed });
      await factory.note(`${changed ? 'removed' : 'was not set:'} ${key} ${changed ? 'from' : 'in'} ${displayPath(path)}`);
    });
  command.addHelpText('after', '\nRemoving a key that is not set does nothing (exit 0). --json prints {path, key, changed}.\n');
  return addExamples(command, ['govctl config unset systemName']);
}
