/**
 * The transparency log's administration (docs/ledger.md): `govctl admin ledger-key create` makes
 * the log key file of a database made before the log existed (`admin init` makes it for new ones),
 * and `govctl admin witness add|list|revoke` registers the witnesses whose cosignatures a
 * workspace's log accepts and serves.
 */
import { Argument, Command } from 'commander';
import { existsSync, rmSync } from 'node:fs';
import type { WitnessInfo } from '../../server/index.js';
import { addExamples } from '../command-kit.js';
import { ConfigError } from '../errors.js';
import type { Factory } from '../factory.js';
import { printFields, printJson, printTable, type Column } from '../render.js';
import { displayPath } from '../settings.js';
import { assertDatabaseFile, databaseLocation, dbOption, logKeyFile, withDatabaseErrors } from './database.js';
import { adminWorkspace } from './options.js';

const DEFAULT_PREFIX = 'govctl.local/ledger';

export function createLedgerKeyCommand(factory: Factory): Command {
  const create = new Command('create')
    .description("create the log key file of a database (0600, never overwritten) and print each workspace's verifier key")
    .addOption(dbOption())
    .option(
      '--log-key <file>',
      'where to write it (default: $GOVCTL_LOG_KEY_FILE, else <db>.ledger-key, where `govctl serve` looks; required with a PostgreSQL URL)',
    )
    .option('--log-origin <prefix>', 'the origin prefix `govctl serve --log-origin` will use', DEFAULT_PREFIX)
    .action(async (flags: { db?: string; logKey?: string; logOrigin: string }) => {
      const path = databaseLocation(flags.db, factory, true, 'admin ledger-key create');
      assertDatabaseFile(path);
      const result = await withDatabaseErrors(path, async (server) => {
        const file = logKeyFile(path, flags.logKey, factory, server);
        if (existsSync(file))
          throw new ConfigError(`the log key file ${displayPath(file)} exists already; it is never overwritten`, {
            field: '--log-key',
            hint: 'see "Rotating the log key" in docs/ledger.md',
          });
        server.createLedgerKey(file, flags.logOrigin);
        try {
          return { file, keys: await server.ledgerVerifierKeys(path, server.readLedgerKey(file), flags.logOrigin) };
        } catch (error) {
          // made by this run for a database it cannot read: no key file is left for it
          rmSync(file, { force: true });
          throw error;
        }
      });
      if (factory.globals.json === true) return printJson(factory.io.stdout, { ledger_key_file: result.file, verifier_keys: result.keys });
      await printFields(factory.io.stdout, [
        ['ledger_key_file', displayPath(result.file)],
        ...result.keys.map((k): [string, unknown] => [k.workspace_id, k.verifier_key]),
      ]);
    });
  const command = new Command('ledger-key').description("the transparency log's signing key file").addCommand(create);
  addExamples(create, [
    'govctl admin ledger-key create --db /var/lib/govctl/server.db',
    'govctl admin ledger-key create --db postgres://govctl@db/govctl --log-key /etc/govctl/ledger-key',
  ]);
  return command;
}

const WITNESS_COLUMNS: Column<WitnessInfo>[] = [
  { header: 'NAME', value: (w) => w.name },
  { header: 'WORKSPACE', value: (w) => w.workspace_id, shrink: 'id' },
  { header: 'ADDED', value: (w) => w.added_at },
  { header: 'REVOKED', value: (w) => w.revoked_at ?? '' },
  { header: 'KEY', value: (w) => w.verifier_key, shrink: 'middle' },
];

async function printWitness(factory: Factory, witness: WitnessInfo): Promise<void> {
  if (factory.globals.json === true) return printJson(factory.io.stdout, witness);
  await printFields(
    factory.io.stdout,
    Object.entries(witness).map(([k, v]): [string, unknown] => [k, v ?? '']),
  );
}

export function createWitnessCommand(factory: Factory): Command {
  const add = new Command('add')
    .description("register a witness verifier key (tlog-cosignature, type 0x04) for a workspace's log")
    .addOption(dbOption())
    .requiredOption('--key <vkey>', 'the witness verifier key: <name>+<key id>+<base64>')
    .option('--name <name>', "the witness name (must be the key's name)")
    .action(async (flags: { db?: string; key: string; name?: string }) => {
      const path = databaseLocation(flags.db, factory, true, 'admin witness add');
      const workspaceId = adminWorkspace(factory, true, 'admin witness add');
      const witness = await withDatabaseErrors(path, (server) =>
        server.addWitness(path, { workspaceId, key: flags.key, ...(flags.name !== undefined ? { name: flags.name } : {}) }),
      );
      await printWitness(factory, witness);
    });
  const list = new Command('list')
    .description('list the witnesses of a workspace (or of every workspace)')
    .addOption(dbOption())
    .action(async (flags: { db?: string }) => {
      const path = databaseLocation(flags.db, factory, true, 'admin witness list');
      const workspaceId = adminWorkspace(factory, false, 'admin witness list');
      const witnesses = await withDatabaseErrors(path, (server) => server.listWitnesses(path, workspaceId !== undefined ? { workspaceId } : {}));
      if (factory.globals.json === true) return printJson(factory.io.stdout, { witnesses });
      await printTable(factory.io.stdout, WITNESS_COLUMNS, witnesses, { now: factory.clock });
    });
  const revoke = new Command('revoke')
    .description("stop accepting a witness's cosignatures for a workspace")
    .addOption(dbOption())
    .addArgument(new Argument('<name>', 'the witness name'))
    .action(async (name: string, flags: { db?: string }) => {
      const path = databaseLocation(flags.db, factory, true, 'admin witness revoke');
      const workspaceId = adminWorkspace(factory, true, 'admin witness revoke');
      await printWitness(factory, await withDatabaseErrors(path, (server) => server.revokeWitness(path, { workspaceId, name })));
    });
  const command = new Command('witness')
    .description("the witnesses whose cosignatures a workspace's log accepts")
    .addCommand(add)
    .addCommand(list)
    .addCommand(revoke);
  return addExamples(command, [
    'govctl admin witness add --db server.db --workspace ws_… --key "witness.example/w1+aa4a09d1+BOpK…"',
    'govctl admin witness list --db server.db --workspace ws_…',
    'govctl admin witness revoke --db server.db --workspace ws_… witness.example/w1',
  ]);
}
