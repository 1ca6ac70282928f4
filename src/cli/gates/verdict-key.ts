/**
 * `govctl gates verdict-key`: the public key that verifies the service's gate verdicts (GET
 * gates/verdict-key), as hex or PEM, to pin in a pipeline or an admission policy (docs/ci.md).
 * The key comes from the service: fetch it once from a service you trust and keep it, rather than
 * fetching it where a verdict is checked.
 */
import { Command, Option } from 'commander';
import { NetworkError } from '../../client/errors.js';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { printJson } from '../render.js';

export const KEY_FORMATS = ['hex', 'pem'] as const;

export interface VerdictKeyOptions {
  /** default `hex` */
  format: (typeof KEY_FORMATS)[number];
  json: boolean;
}

export async function run(options: VerdictKeyOptions, deps: Factory): Promise<void> {
  const body = await (await deps.api()).verdictKey();
  if (typeof body?.public_key !== 'string' || !/^[0-9a-f]{64}$/.test(body.public_key) || typeof body.pem !== 'string') {
    throw new NetworkError('malformed_response', 'GET gates/verdict-key: the reply is not a verdict key');
  }
  if (options.json) return printJson(deps.io.stdout, body);
  await deps.io.stdout.write(options.format === 'pem' ? body.pem.replace(/\n?$/, '\n') : `${body.public_key}\n`);
}

export function createVerdictKeyCommand(factory: Factory): Command {
  const command = new Command('verdict-key')
    .description('the public key that verifies gate verdicts (GET gates/verdict-key)')
    .addOption(new Option('--format <format>', 'hex (32 bytes) or pem (what cosign and Kyverno take)').choices(KEY_FORMATS).default('hex'))
    .action(async (flags: { format: (typeof KEY_FORMATS)[number] }) => run({ format: flags.format, json: factory.globals.json === true }, factory));
  return addExamples(command, ['govctl gates verdict-key', 'govctl gates verdict-key --format pem > verdict-key.pem']);
}
