/** `govctl config`: the settings in effect, and a starter config file. */
import { Command } from 'commander';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { createConfigInitCommand } from './init.js';
import { createConfigShowCommand } from './show.js';
import { createConfigTrustHostCommand } from './trust-host.js';

export function createConfigCommand(factory: Factory): Command {
  const command = new Command('config')
    .description('show the effective settings and where each came from; write a starter config file; trust a host')
    .addCommand(createConfigShowCommand(factory))
    .addCommand(createConfigInitCommand(factory))
    .addCommand(createConfigTrustHostCommand(factory));
  return addExamples(command, ['govctl config show', 'govctl config init --base-url https://governance.example.com --api-key-file ~/.govctl-key']);
}
