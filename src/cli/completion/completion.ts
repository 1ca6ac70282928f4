/**
 * `govctl completion bash|zsh|fish`: prints a shell completion script generated from this
 * program's command tree (commands, subcommands, the record types of `evidence add` and their
 * flags, flag values).
 */
import { Argument, Command } from 'commander';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { INSTALL, SHELLS, type Shell } from './shells.js';

export interface CompletionOptions {
  shell: Shell;
  /** the program whose tree the script completes */
  program: Command;
}

export function createCompletionCommand(factory: Factory): Command {
  const command = new Command('completion')
    .description('print a shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action(async (shell: Shell, _flags: unknown, self: Command) => {
      let program = self;
      while (program.parent) program = program.parent;
      return run({ shell, program }, factory);
    });
  command.addHelpText(
    'after',
    `\nInstall:\n${SHELLS.map((shell) => `  ${shell}:\n${INSTALL[shell].map((line) => `    ${line}`).join('\n')}`).join('\n')}\n`,
  );
  return addExamples(command, ['govctl completion bash > ~/.local/share/bash-completion/completions/govctl', 'source <(govctl completion zsh)', 'govctl completion fish > ~/.config/fish/completions/govctl.fish']);
}

export async function run(options: CompletionOptions, deps: Factory): Promise<void> {
  const [{ commandTree }, scripts] = await Promise.all([import('./tree.js'), import('./scripts.js')]);
  const tree = commandTree(options.program);
  const version = options.program.version() ?? '';
  const script = options.shell === 'bash' ? scripts.bashScript(tree, version) : options.shell === 'zsh' ? scripts.zshScript(tree, version) : scripts.fishScript(tree, version);
  await deps.io.stdout.write(script);
}
