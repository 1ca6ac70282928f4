/**
 * The command groups: the list in program.ts names each group as its module builds it, and a run
 * builds only the group it names unless it needs the whole tree.
 */
import { describe, expect, it } from 'vitest';
import { createFactory } from '../../src/cli/factory.js';
import { createMemoryIO } from '../../src/cli/io.js';
import { COMMAND_GROUPS, createProgram, groupsFor } from '../../src/cli/program.js';
import { runCli } from '../helpers/cli.js';

function program(argv?: readonly string[]) {
  const factory = createFactory({ io: createMemoryIO(), env: {}, cwd: '/', globals: () => ({}), signal: new AbortController().signal });
  return createProgram(factory, {}, argv);
}

describe('command groups', () => {
  it('lists each group under the name its module gives it, in the order of the help', async () => {
    const built = await program();
    expect(built.commands.map((command) => command.name())).toEqual(COMMAND_GROUPS.map((group) => group.name));
  });

  it('builds only the group a run names, and every group when the run needs the tree', async () => {
    expect((await program(['attest', 'sign', 'x'])).commands.map((command) => command.name())).toEqual(['attest']);
    expect((await program(['signing-key', 'generate'])).commands.map((command) => command.name())).toEqual(['signing-key']);
    for (const argv of [[], ['--json', 'whoami'], ['attst'], ['help', 'attest'], ['completion', 'bash'], ['--help']]) {
      expect(groupsFor(argv), argv.join(' ')).toBe(COMMAND_GROUPS);
    }
  });

  it("builds only the evidence subcommand a run names, and all of them for the group's help, an option first or an unknown word", async () => {
    const subcommands = async (argv?: readonly string[]) =>
      (await program(argv)).commands.find((command) => command.name() === 'evidence')!.commands.map((command) => command.name());
    const all = ['add', 'export', 'import', 'list', 'sign', 'verify'];
    expect(await subcommands(['evidence', 'list', '--json'])).toEqual(['list']);
    expect(await subcommands(['evidence', 'add', 'ai_risk_assessment', '--help'])).toEqual(['add']);
    for (const argv of [undefined, ['evidence'], ['evidence', '--help'], ['evidence', '--json', 'list'], ['evidence', 'lst'], ['--json', 'evidence', 'list']]) {
      expect(await subcommands(argv), String(argv)).toEqual(all);
    }
    const typo = await runCli(['evidence', 'lst']);
    expect(typo.exitCode).toBe(64);
  });

  it('still suggests the command a typo meant, and finds a command after a global option', async () => {
    const typo = await runCli(['atest', 'sign']);
    expect(typo.exitCode).toBe(64);
    expect(typo.stderr).toBe("govctl: unknown command 'atest' for 'govctl'; did you mean `govctl attest`?\n");
    const after = await runCli(['--json', 'signing-key', 'generate']);
    expect(after.exitCode, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout)).toHaveProperty('public_key');
  });
});
