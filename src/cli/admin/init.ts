/**
 * `govctl admin init --db FILE|URL`: provisions an organisation, a workspace, a user and a first API
 * key in a service database (a SQLite file created when missing; a PostgreSQL database's schema
 * created when missing, the database itself must exist). Every run adds another organisation and
 * workspace. The API key is printed this once; `--json` prints `{org_id, workspace_id, user_id,
 * api_key, ledger_key}` (docs/cli.md; ledger_key: the workspace log's verifier key, docs/ledger.md).
 */
import { existsSync } from 'node:fs';
import { Command } from 'commander';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { printFields, printJson } from '../render.js';
import { databaseLocation, dbOption, logKeyFile, withDatabaseErrors } from './database.js';

export interface AdminInitOptions {
  json: boolean;
  /** the database (--db; default DATABASE_URL) */
  db?: string | undefined;
  orgName?: string;
  workspaceName?: string;
  email?: string;
  /** the transparency log's origin prefix, for the verifier key printed (default govctl.local/ledger) */
  logOrigin?: string;
  /** the log's key file, made when missing (default GOVCTL_LOG_KEY_FILE, else beside a database file; required for a PostgreSQL URL) */
  logKey?: string;
}

export function createAdminInitCommand(factory: Factory): Command {
  const command = new Command('init')
    .description('provision an organisation, workspace, user and API key in a service database (created if missing)')
    .addOption(dbOption())
    .option('--org-name <name>', "the organisation's name", 'default')
    .option('--workspace-name <name>', "the workspace's name", 'default')
    .option('--email <email>', "the first user's e-mail")
    .option('--log-origin <prefix>', "the transparency log's origin prefix `govctl serve --log-origin` uses", 'govctl.local/ledger')
    .option(
      '--log-key <file>',
      "the transparency log's key file, made if missing (default: $GOVCTL_LOG_KEY_FILE, else <db>.ledger-key; required with a PostgreSQL URL)",
    )
    .action(async (flags: { db?: string; orgName: string; workspaceName: string; email?: string; logOrigin: string; logKey?: string }) =>
      run(
        {
          json: factory.globals.json === true,
          db: flags.db,
          orgName: flags.orgName,
          workspaceName: flags.workspaceName,
          logOrigin: flags.logOrigin,
          ...(flags.email ? { email: flags.email } : {}),
          ...(flags.logKey !== undefined ? { logKey: flags.logKey } : {}),
        },
        factory,
      ),
    );
  command.addHelpText(
    'after',
    '\nThe API key is shown this once: put it in your secret store (SERVICE_API_KEY). Running init again on\n' +
      'the same file adds another organisation and workspace. --json prints {org_id, workspace_id, user_id, api_key,\n' +
      "ledger_key}. The transparency log's key file is made beside the database (<db>.ledger-key, 0600) on first\n" +
      "use; ledger_key is the workspace log's verifier key: give it to auditors (govctl ledger --ledger-key).\n" +
      'With a postgres:// URL (--db or DATABASE_URL) the database must exist; its schema is made here. Give\n' +
      '--log-key FILE: the key file every replica of `govctl serve` is then given (docs/service.md, "PostgreSQL").\n',
  );
  return addExamples(command, [
    'govctl admin init --db /var/lib/govctl/server.db',
    'govctl admin init --db server.db --org-name Acme --json | jq -r .api_key > api-key && chmod 600 api-key',
    'DATABASE_URL=postgres://govctl@db.internal/govctl govctl admin init --log-key /etc/govctl/ledger-key',
  ]);
}

export async function run(options: AdminInitOptions, deps: Factory): Promise<void> {
  const path = databaseLocation(options.db, deps, false, 'admin init');
  const { identity, ledgerKey } = await withDatabaseErrors(path, async (server) => {
    // where the log's key is, decided before anything is provisioned (a PostgreSQL URL needs --log-key)
    const keyFile = logKeyFile(path, options.logKey, deps, server);
    const provisioned = await server.provision(path, {
      ...(options.orgName !== undefined ? { orgName: options.orgName } : {}),
      ...(options.workspaceName !== undefined ? { workspaceName: options.workspaceName } : {}),
      ...(options.email !== undefined ? { userEmail: options.email } : {}),
    });
    // The transparency log's key lives outside the database, never in it (docs/ledger.md); made once.
    if (!existsSync(keyFile)) server.createLedgerKey(keyFile, options.logOrigin);
    const keys = await server.ledgerVerifierKeys(path, server.readLedgerKey(keyFile), options.logOrigin);
    return { identity: provisioned, ledgerKey: keys.find((k) => k.workspace_id === provisioned.workspace_id)!.verifier_key };
  });
  const shown = { org_id: identity.org_id, workspace_id: identity.workspace_id, user_id: identity.user_id, api_key: identity.api_key, ledger_key: ledgerKey };
  if (options.json) return printJson(deps.io.stdout, shown);
  await printFields(deps.io.stdout, Object.entries(shown));
  if (deps.io.stdout.isTTY) await deps.note('the API key is shown this once: store it now (e.g. as the CI secret SERVICE_API_KEY)');
}
