/**
 * `govctl admin api-key create|list|revoke --db FILE`: the API keys of a service database. A key is
 * shown in clear only by `create`, once; `list` shows ids and prefixes, never keys.
 */
import { Argument, Command, Option } from 'commander';
import type { ApiKeyInfo, ApiKeyRole } from '../../server/index.js';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { printFields, printJson, printTable, type Column } from '../render.js';
import { databaseLocation, dbOption, withDatabaseErrors } from './database.js';
import { adminWorkspace, parseDuration } from './options.js';

/** The roles a key may have (the service's API_KEY_ROLES; a type-only import keeps the service out of this bundle). */
const API_KEY_ROLES: readonly ApiKeyRole[] = ['writer', 'reader', 'admin'];

export interface ApiKeyCreateOptions {
  json: boolean;
  /** the database (--db; default DATABASE_URL) */
  db?: string | undefined;
  workspaceId: string;
  name?: string;
  /** lifetime in ms (default: no expiry) */
  expiresInMs?: number;
  /** what the key may do (default writer) */
  role?: ApiKeyRole;
}

export interface ApiKeyListOptions {
  json: boolean;
  /** the database (--db; default DATABASE_URL) */
  db?: string | undefined;
  workspaceId?: string;
}

export interface ApiKeyRevokeOptions {
  json: boolean;
  /** the database (--db; default DATABASE_URL) */
  db?: string | undefined;
  keyId: string;
}

/** The fields of a key, in the order shown. */
function keyFields(key: ApiKeyInfo): [string, unknown][] {
  return [
    ['key_id', key.key_id],
    ['role', key.role],
    ['prefix', key.prefix],
    ['workspace_id', key.workspace_id],
    ['user_id', key.user_id],
    ['name', key.name ?? ''],
    ['created_at', key.created_at],
    ['expires_at', key.expires_at ?? ''],
    ['revoked_at', key.revoked_at ?? ''],
  ];
}

export function createApiKeyCreateCommand(factory: Factory): Command {
  const command = new Command('create')
    .description('create an API key for a workspace; the key is shown this once')
    .usage('--db FILE --workspace WS [--role writer|reader|admin] [--name N] [--expires-in 90d]')
    .addOption(dbOption())
    .addOption(
      new Option('--role <role>', 'writer (reads and writes records), reader (reads everything, writes nothing) or admin (also changes the gate policy)')
        .choices(API_KEY_ROLES)
        .default('writer'),
    )
    .option('--name <name>', 'a label for listings (e.g. "github-actions")')
    .addOption(new Option('--expires-in <duration>', 'lifetime: 12h, 90d, 2w, 1y (default: no expiry)').argParser(parseDuration))
    .action(async (flags: { db?: string; name?: string; expiresIn?: number; role: ApiKeyRole }) =>
      runCreate(
        {
          json: factory.globals.json === true,
          db: flags.db,
          workspaceId: adminWorkspace(factory, true, 'admin api-key create'),
          ...(flags.name !== undefined ? { name: flags.name } : {}),
          ...(flags.expiresIn !== undefined ? { expiresInMs: flags.expiresIn } : {}),
          role: flags.role,
        },
        factory,
      ),
    );
  command.addHelpText('after', "\n--workspace WS is the global option. --json prints the key's fields and api_key.\n");
  return addExamples(command, [
    'govctl admin api-key create --db server.db --workspace ws_… --name ci --expires-in 90d',
    'govctl admin api-key create --db server.db --workspace ws_… --role reader --name auditor',
    'govctl admin api-key create --db server.db --workspace ws_… --json | jq -r .api_key',
  ]);
}

export async function runCreate(options: ApiKeyCreateOptions, deps: Factory): Promise<void> {
  const path = databaseLocation(options.db, deps, true, 'admin api-key create');
  const created = await withDatabaseErrors(path, (server) =>
    server.createApiKey(path, {
      workspaceId: options.workspaceId,
      ...(options.name !== undefined ? { name: options.name } : {}),
      ...(options.expiresInMs !== undefined ? { expiresAt: new Date(deps.clock().getTime() + options.expiresInMs) } : {}),
      ...(options.role !== undefined ? { role: options.role } : {}),
    }),
  );
  if (options.json) return printJson(deps.io.stdout, created);
  await printFields(deps.io.stdout, [...keyFields(created), ['api_key', created.api_key]]);
  if (deps.io.stdout.isTTY) await deps.note('the API key is shown this once: store it now');
}

export function createApiKeyListCommand(factory: Factory): Command {
  const command = new Command('list')
    .description('list the API keys (ids, prefixes, dates; never the keys)')
    .usage('--db FILE [--workspace WS]')
    .addOption(dbOption())
    .action(async (flags: { db?: string }) => {
      const workspaceId = adminWorkspace(factory, false, 'admin api-key list');
      return runList({ json: factory.globals.json === true, db: flags.db, ...(workspaceId ? { workspaceId } : {}) }, factory);
    });
  command.addHelpText(
    'after',
    "\n--workspace WS (the global option) lists one workspace's keys. Piped, one line per key: key_id, prefix,\n" +
      'workspace_id, name, created_at, expires_at, revoked_at, role. --json prints {api_keys: [...]}.\n',
  );
  return addExamples(command, ['govctl admin api-key list --db server.db', 'govctl admin api-key list --db server.db --workspace ws_… --json']);
}

const KEY_COLUMNS: readonly Column<ApiKeyInfo>[] = [
  { header: 'key id', value: (key) => key.key_id, shrink: 'middle' },
  { header: 'prefix', value: (key) => key.prefix },
  { header: 'workspace', value: (key) => key.workspace_id, shrink: 'middle' },
  { header: 'name', value: (key) => key.name ?? '' },
  { header: 'created', value: (key) => key.created_at, kind: 'time' },
  { header: 'expires', value: (key) => key.expires_at ?? '', kind: 'time' },
  { header: 'revoked', value: (key) => key.revoked_at ?? '', kind: 'time', style: (text, out) => out.color.red(text) },
  { header: 'role', value: (key) => key.role },
];

export async function runList(options: ApiKeyListOptions, deps: Factory): Promise<void> {
  const path = databaseLocation(options.db, deps, true, 'admin api-key list');
  const keys = await withDatabaseErrors(path, (server) => server.listApiKeys(path, options.workspaceId ? { workspaceId: options.workspaceId } : {}));
  if (options.json) return printJson(deps.io.stdout, { api_keys: keys });
  if (keys.length === 0) {
    if (deps.io.stdout.isTTY) await deps.note('no API keys');
    return;
  }
  await printTable(deps.io.stdout, KEY_COLUMNS, keys, { now: deps.clock });
}

export function createApiKeyRevokeCommand(factory: Factory): Command {
  const command = new Command('revoke')
    .description('revoke an API key at once (revoking it again changes nothing)')
    .addArgument(new Argument('<key-id>', "the key's id, from `admin api-key list`"))
    .addOption(dbOption())
    .action(async (keyId: string, flags: { db?: string }) => runRevoke({ json: factory.globals.json === true, db: flags.db, keyId }, factory));
  command.addHelpText('after', "\nRequests with the key are refused (401, exit 77 in govctl) from then on. --json prints the key's fields.\n");
  return addExamples(command, ['govctl admin api-key revoke --db server.db key_…']);
}

export async function runRevoke(options: ApiKeyRevokeOptions, deps: Factory): Promise<void> {
  const path = databaseLocation(options.db, deps, true, 'admin api-key revoke');
  const key = await withDatabaseErrors(path, (server) => server.revokeApiKey(path, options.keyId));
  if (options.json) return printJson(deps.io.stdout, key);
  await printFields(deps.io.stdout, keyFields(key));
}
