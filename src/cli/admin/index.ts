/**
 * `govctl admin`: administration of a service database (the file `govctl serve --db` uses), run on
 * the service's host; no API key is involved. Each command opens the file, does its work in one
 * transaction and closes it, so it is safe beside a running `govctl serve`.
 */
import { Command } from 'commander';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { createApiKeyCreateCommand, createApiKeyListCommand, createApiKeyRevokeCommand } from './api-key.js';
import { createAdminGatesSetCommand, createAdminGatesShowCommand, createAdminGatesUnsetCommand } from './gates.js';
import { createAdminInitCommand } from './init.js';
import { createLedgerKeyCommand, createWitnessCommand } from './ledger.js';
import { createAdminMigrateCommand } from './migrate.js';
import { createSigningKeyAddCommand, createSigningKeyListCommand, createSigningKeyPolicyCommand, createSigningKeyRevokeCommand } from './signing-key.js';

export function createAdminCommand(factory: Factory): Command {
  const apiKey = new Command('api-key')
    .description('create, list and revoke API keys')
    .addCommand(createApiKeyCreateCommand(factory))
    .addCommand(createApiKeyListCommand(factory))
    .addCommand(createApiKeyRevokeCommand(factory));
  const gates = new Command('gates')
    .description("a workspace's gate policy")
    .addCommand(createAdminGatesSetCommand(factory))
    .addCommand(createAdminGatesUnsetCommand(factory))
    .addCommand(createAdminGatesShowCommand(factory));
  const signingKey = new Command('signing-key')
    .description("a workspace's verifying keys and key policy (which signatures earn `witnessed`)")
    .addCommand(createSigningKeyAddCommand(factory))
    .addCommand(createSigningKeyListCommand(factory))
    .addCommand(createSigningKeyRevokeCommand(factory))
    .addCommand(createSigningKeyPolicyCommand(factory));
  const command = new Command('admin')
    .description('provision organisations, workspaces and API keys, set gate and key policy, in a service database')
    .addCommand(createAdminInitCommand(factory))
    .addCommand(apiKey)
    .addCommand(gates)
    .addCommand(createLedgerKeyCommand(factory))
    .addCommand(createWitnessCommand(factory))
    .addCommand(signingKey)
    .addCommand(createAdminMigrateCommand(factory));
  return addExamples(command, [
    'govctl admin init --db server.db --json',
    'govctl admin api-key create --db server.db --workspace ws_… --name ci --expires-in 90d',
    'govctl admin api-key revoke --db server.db key_…',
    'govctl admin gates set eu_ai_act --mode required --threshold 90 --db server.db --workspace ws_…',
    'govctl admin signing-key add --db server.db --workspace ws_… --public-key HEX --name ci',
    'govctl admin migrate --from server.db --to postgres://govctl@db.internal/govctl',
  ]);
}
