/** `govctl config`: the settings in effect, and a starter config file. */
import { Command } from 'commander';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { createConfigGetCommand, createConfigSetCommand, createConfigUnsetCommand } from './edit.js';
import { createConfigInitCommand } from './init.js';
import { createConfigShowCommand } from './show.js';
import { createConfigTrustHostCommand } from './trust-host.js';

export function createConfigCommand(factory: Factory): Command {
  const command = new Command('config')
    .description('show the effective settings and where each came from; write a starter config file; trust a host; get, set or unset a key of the user config')
    .addCommand(createConfigShowCommand(factory))
    .addCommand(createConfigInitCommand(factory))
    .addCommand(createConfigTrustHostCommand(factory))
    .addCommand(createConfigGetCommand(factory))
    .addCommand(createConfigSetCommand(factory))
    .addCommand(createConfigUnsetCommand(factory));
  return addExamples(command, [
    'govctl config show',
    'govctl config init --base-url https://governance.example.com --api-key-file ~/.govctl-key',
    'govctl config set systemName loan-scorer',
  ]);
}
