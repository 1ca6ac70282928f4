/**
 * `govctl help options`: the global options, valid with every command. They are listed once, here
 * and in `govctl --help`, rather than in every command's help (each points here in one line).
 * The list is the root command's own options, formatted by commander's help, so it cannot drift.
 */
import { Command } from 'commander';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';

export function createHelpOptionsCommand(factory: Factory): Command {
  const command = new Command('options').description('print the global options, valid with every command').action(async (_flags: unknown, self: Command) => {
    let root = self;
    while (root.parent) root = root.parent;
    await factory.io.stdout.write(globalOptionsHelp(root, factory.io.stdout.isTTY ? factory.io.stdout.columns || 80 : 80));
  });
  return addExamples(command, ['govctl help options', 'govctl evidence list --system loan-scorer --json']);
}

/** The root's options as commander's help lays them out, wrapped to `width`. */
export function globalOptionsHelp(root: Command, width: number): string {
  const helper = root.createHelp();
  helper.prepareContext({ helpWidth: width });
  const termWidth = helper.longestOptionTermLength(root, helper);
  const items = helper.visibleOptions(root).map((option) => helper.formatItem(helper.optionTerm(option), termWidth, helper.optionDescription(option), helper));
  return `Global options (give them before or after the command):\n${items.join('\n')}\n`;
}
