/** `govctl gates`: release gates. */
import { Command } from 'commander';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { createGatesCheckCommand } from './check-command.js';
import { createVerdictKeyCommand } from './verdict-key.js';
import { createVerdictsCommand } from './verdicts.js';
import { createVerifyAttestationCommand } from './verify-attestation.js';

export function createGatesCommand(factory: Factory): Command {
  const command = new Command('gates')
    .description('release gates: one per framework, blocking (required) or advisory; signed verdicts about artifacts')
    .addCommand(createGatesCheckCommand(factory))
    .addCommand(createVerdictKeyCommand(factory))
    .addCommand(createVerdictsCommand(factory))
    .addCommand(createVerifyAttestationCommand(factory));
  return addExamples(command, ['govctl gates check', 'govctl gates check --fail-on hard --format github']);
}
