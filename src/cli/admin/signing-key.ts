/**
 * `govctl admin signing-key add|list|revoke|policy --db FILE --workspace WS`: a workspace's registry
 * of verifying keys (Ed25519 public keys) and its key policy (docs/security.md). Under `open` (the
 * default) any valid witness signature earns `witnessed`; under `registered` only one by a
 * registered, unrevoked key in the canonical form does, and others are stored as `declared`.
 */
import { Argument, Command, InvalidArgumentError, Option } from 'commander';
import type { KeyPolicy, SigningKeyInfo, SigningKeyRegistry } from '../../server/index.js';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { printFields, printJson, printTable, type Column } from '../render.js';
import { databaseLocation, dbOption, withDatabaseErrors } from './database.js';
import { adminWorkspace } from './options.js';

/** The policies, named here too so that the CLI's help does not load the server module. */
const POLICIES: readonly KeyPolicy[] = ['open', 'registered'];

function publicKeyArg(value: string): string {
  if (!/^[0-9a-fA-F]{64}$/.test(value.trim())) throw new InvalidArgumentError('must be an Ed25519 public key: 64 hex characters (govctl signing-key public)');
  return value.trim().toLowerCase();
}

const publicKeyOption = () => new Option('--public-key <hex>', 'the Ed25519 public key (64 hex characters)').argParser(publicKeyArg).makeOptionMandatory();

function keyFields(key: SigningKeyInfo): [string, unknown][] {
  return [
    ['workspace_id', key.workspace_id],
    ['fingerprint', key.fingerprint],
    ['public_key', key.public_key],
    ['name', key.name ?? ''],
    ['created_at', key.created_at],
    ['revoked_at', key.revoked_at ?? ''],
  ];
}

export interface SigningKeyChangeOptions {
  json: boolean;
  /** the database (--db; default DATABASE_URL) */
  db?: string | undefined;
  workspaceId: string;
  publicKeyHex: string;
  name?: string;
}

export function createSigningKeyAddCommand(factory: Factory): Command {
  const command = new Command('add')
    .description('register a verifying key for a workspace (adding it again changes nothing)')
    .usage('--db FILE --workspace WS --public-key HEX [--name N]')
    .addOption(dbOption())
    .addOption(publicKeyOption())
    .option('--name <name>', 'a label for listings (e.g. "ci-runner")')
    .action(async (flags: { db?: string; publicKey: string; name?: string }) =>
      runAdd(
        {
          json: factory.globals.json === true,
          db: flags.db,
          workspaceId: adminWorkspace(factory, true, 'admin signing-key add'),
          publicKeyHex: flags.publicKey,
          ...(flags.name !== undefined ? { name: flags.name } : {}),
        },
        factory,
      ),
    );
  command.addHelpText('after', "\nA revoked key is never reinstated: make a new key pair. --json prints the key's fields.\n");
  return addExamples(command, ['govctl admin signing-key add --db server.db --workspace ws_… --public-key "$(govctl signing-key public)" --name ci']);
}

export async function runAdd(options: SigningKeyChangeOptions, deps: Factory): Promise<void> {
  const path = databaseLocation(options.db, deps, true, 'admin signing-key add');
  const key = await withDatabaseErrors(path, (server) =>
    server.addSigningKey(path, {
      workspaceId: options.workspaceId,
      publicKeyHex: options.publicKeyHex,
      ...(options.name !== undefined ? { name: options.name } : {}),
    }),
  );
  if (options.json) return printJson(deps.io.stdout, key);
  await printFields(deps.io.stdout, keyFields(key));
}

export function createSigningKeyRevokeCommand(factory: Factory): Command {
  const command = new Command('revoke')
    .description("revoke a workspace's verifying key at once (revoking it again changes nothing)")
    .usage('--db FILE --workspace WS --public-key HEX')
    .addOption(dbOption())
    .addOption(publicKeyOption())
    .action(async (flags: { db?: string; publicKey: string }) =>
      runRevoke(
        {
          json: factory.globals.json === true,
          db: flags.db,
          workspaceId: adminWorkspace(factory, true, 'admin signing-key revoke'),
          publicKeyHex: flags.publicKey,
        },
        factory,
      ),
    );
  command.addHelpText(
    'after',
    "\nUnder the registered policy its signatures earn `declared` from the next request on; attestations\nstored before keep their tier. --json prints the key's fields.\n",
  );
  return addExamples(command, ['govctl admin signing-key revoke --db server.db --workspace ws_… --public-key 3b6a27bc…']);
}

export async function runRevoke(options: SigningKeyChangeOptions, deps: Factory): Promise<void> {
  const path = databaseLocation(options.db, deps, true, 'admin signing-key revoke');
  const key = await withDatabaseErrors(path, (server) =>
    server.revokeSigningKey(path, { workspaceId: options.workspaceId, publicKeyHex: options.publicKeyHex }),
  );
  if (options.json) return printJson(deps.io.stdout, key);
  await printFields(deps.io.stdout, keyFields(key));
}

const KEY_COLUMNS: readonly Column<SigningKeyInfo>[] = [
  { header: 'fingerprint', value: (key) => key.fingerprint, shrink: 'middle' },
  { header: 'public key', value: (key) => key.public_key, shrink: 'middle' },
  { header: 'name', value: (key) => key.name ?? '' },
  { header: 'created', value: (key) => key.created_at, kind: 'time' },
  { header: 'revoked', value: (key) => key.revoked_at ?? '', kind: 'time', style: (text, out) => out.color.red(text) },
];

async function printRegistry(registry: SigningKeyRegistry, json: boolean, deps: Factory): Promise<void> {
  if (json) return printJson(deps.io.stdout, registry);
  await printFields(deps.io.stdout, [
    ['workspace_id', registry.workspace_id],
    ['policy', registry.policy],
  ]);
  if (registry.keys.length === 0) {
    if (deps.io.stdout.isTTY) await deps.note('no signing keys registered');
    return;
  }
  await printTable(deps.io.stdout, KEY_COLUMNS, registry.keys, { now: deps.clock });
}

export function createSigningKeyListCommand(factory: Factory): Command {
  const command = new Command('list')
    .description("show a workspace's key policy and its verifying keys (revoked ones too)")
    .usage('--db FILE --workspace WS')
    .addOption(dbOption())
    .action(async (flags: { db?: string }) => {
      const path = databaseLocation(flags.db, factory, true, 'admin signing-key list');
      const workspaceId = adminWorkspace(factory, true, 'admin signing-key list');
      const registry = await withDatabaseErrors(path, (server) => server.listSigningKeys(path, { workspaceId }));
      await printRegistry(registry, factory.globals.json === true, factory);
    });
  command.addHelpText('after', '\n--json prints {workspace_id, policy, keys: [...]}.\n');
  return addExamples(command, ['govctl admin signing-key list --db server.db --workspace ws_…']);
}

export function createSigningKeyPolicyCommand(factory: Factory): Command {
  const command = new Command('policy')
    .description('set which signatures earn `witnessed` in a workspace: open (any valid one) or registered (registered keys only)')
    .addArgument(new Argument('<policy>', 'open or registered').choices(POLICIES))
    .usage('open|registered --db FILE --workspace WS')
    .addOption(dbOption())
    .action(async (policy: KeyPolicy, flags: { db?: string }) => {
      const path = databaseLocation(flags.db, factory, true, 'admin signing-key policy');
      const workspaceId = adminWorkspace(factory, true, 'admin signing-key policy');
      const registry = await withDatabaseErrors(path, (server) => server.setSigningKeyPolicy(path, { workspaceId, policy }));
      await printRegistry(registry, factory.globals.json === true, factory);
    });
  command.addHelpText(
    'after',
    '\nopen (the default): any valid witness_sig earns `witnessed`. registered: only a canonical-form signature\n' +
      'by a registered, unrevoked key does; any other valid one is stored as `declared`, the reason in `detail`.\n',
  );
  return addExamples(command, ['govctl admin signing-key policy registered --db server.db --workspace ws_…']);
}
