/**
 * `govctl attest`: attestations (docs/cli.md). `attest <tool-name>` pushes one: it is
 * the default subcommand `push`, so `attest batch|sign|verify|list` keep options of their own, and a
 * tool named like one of those is attested with `attest push <tool-name>`.
 */
import { Command } from 'commander';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { createAttestBatchCommand } from './batch.js';
import { createAttestListCommand } from './list.js';
import { createAttestPushCommand } from './push.js';
import { createAttestSignCommand } from './sign.js';
import { createAttestVerifyCommand } from './verify.js';

export function createAttestCommand(factory: Factory): Command {
  const attest = new Command('attest')
    .description('hash, sign and push one attestation of a tool run; or batch, sign, verify, list')
    .usage('<tool-name> (--input FILE|- --output FILE | --input-hash H --output-hash H) [options]\n       govctl attest batch|sign|verify|list …');
  attest.addCommand(createAttestPushCommand(factory), { isDefault: true });
  attest.addCommand(createAttestBatchCommand(factory));
  attest.addCommand(createAttestSignCommand(factory));
  attest.addCommand(createAttestVerifyCommand(factory));
  attest.addCommand(createAttestListCommand(factory));
  return addExamples(attest, [
    'govctl attest summarise --input prompt.txt --output answer.txt --system loan-scorer',
    'govctl attest classify --input-hash $IN_SHA --output-hash $OUT_SHA --authorised-by alice@example.com',
    'govctl attest batch attestations.ndjson',
    'govctl attest list --system loan-scorer',
    'govctl attest verify --remote --public-key "$(govctl signing-key public)"',
    'govctl attest sign summarise --input a.txt --output b.txt --system s --workspace ws_1 | govctl attest verify - --workspace ws_1',
  ]);
}
