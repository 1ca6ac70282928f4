/**
 * `govctl help [command...]`: the help of a command (like `govctl <command> --help`), and
 * `govctl help exit-codes` and `govctl help options` (the global options). The program turns commander's own help command off
 * (`helpCommand(false)`), so this one is the only `help`.
 */
import { Command } from 'commander';
import { addExamples } from '../command-kit.js';
import { UsageError } from '../errors.js';
import type { Factory } from '../factory.js';
import { createHelpEnvironmentCommand } from './environment.js';
import { createHelpExitCodesCommand } from './exit-codes.js';
import { createHelpOptionsCommand } from './options.js';

export function createHelpCommand(factory: Factory): Command {
  const command = new Command('help')
    .description(
      'show the help of a command, the global options (`govctl help options`), the exit codes (`govctl help exit-codes`) or the environment variables (`govctl help environment`)',
    )
    .argument('[command...]', 'the command, e.g. `gates check`')
    .addCommand(createHelpExitCodesCommand(factory))
    .addCommand(createHelpOptionsCommand(factory))
    .addCommand(createHelpEnvironmentCommand(factory))
    .action(async (names: string[], _flags: unknown, self: Command) => {
      let target: Command = self.parent ?? self;
      for (const name of names) {
        const next = target.commands.find((sub) => sub.name() === name || sub.aliases().includes(name));
        if (!next)
          throw new UsageError(`unknown command: ${[...names.slice(0, names.indexOf(name)), name].join(' ')}`, {
            hint: 'see `govctl --help` for the commands',
          });
        target = next;
      }
      target.outputHelp();
    });
  return addExamples(command, ['govctl help gates check', 'govctl help options', 'govctl help exit-codes', 'govctl help environment']);
}
