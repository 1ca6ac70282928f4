/**
 * `govctl admin verdict-key create --verdict-key FILE`: makes the key file that signs gate verdicts
 * (0600, never overwritten) and prints its public half to pin (docs/ci.md, "The verdict key").
 * `govctl serve` makes `<db>.verdict-key` beside a SQLite database itself; replicas on PostgreSQL
 * share a file made once with this command.
 */
import { resolve } from 'node:path';
import { Command } from 'commander';
import { addExamples } from '../command-kit.js';
import { ConfigError } from '../errors.js';
import type { Factory } from '../factory.js';
import { printFields, printJson } from '../render.js';
import { displayPath } from '../settings.js';
import { loadServer } from './database.js';

export function createVerdictKeyCommand(factory: Factory): Command {
  const create = new Command('create')
    .description('create a verdict key file (0600, never overwritten) and print its public key')
    .requiredOption('--verdict-key <file>', 'where to write it: give `govctl serve --verdict-key` the same file on every replica')
    .action(async (flags: { verdictKey: string }) => {
      const server = await loadServer();
      const file = resolve(factory.cwd, flags.verdictKey);
      let key;
      try {
        server.createVerdictKey(file);
        key = server.readVerdictKey(file);
      } catch (error) {
        if (error instanceof server.VerdictKeyError) throw new ConfigError(error.message, { field: '--verdict-key' });
        throw error;
      }
      const publicKey = server.verdictPublicKey(key);
      if (factory.globals.json === true) return printJson(factory.io.stdout, { verdict_key_file: file, ...publicKey });
      await printFields(factory.io.stdout, [
        ['verdict_key_file', displayPath(file)],
        ['public_key', publicKey.public_key],
        ['keyid', publicKey.keyid],
      ]);
      await factory.io.stdout.write(publicKey.pem);
    });
  addExamples(create, ['govctl admin verdict-key create --verdict-key /etc/govctl/verdict-key']);
  return new Command('verdict-key').description('the key file that signs gate verdicts').addCommand(create);
}
