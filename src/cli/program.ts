/**
 * The commander program: global options (docs/cli.md "Settings"), the command groups, and the
 * settings every command shares: commander never exits the process and never prints errors
 * itself (main.ts renders them, once, and picks the exit code in exit-codes.ts).
 */
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { addExamples } from './command-kit.js';
import { UsageError } from './errors.js';
import { exitCodeSummary } from './exit-codes.js';
import type { Factory } from './factory.js';
import type { IO } from './io.js';
import { ON_ERROR_MODES } from './settings.js';
import { guardGroup } from './subcommands.js';
import { wrapHelpText } from './table-fit.js';

/**
 * A command group: its name, and its module, loaded only when the run needs it. `load` gets the
 * words after the group's name when the run names the group (undefined when it builds the whole
 * tree), so that a group may load only the subcommand they name (`commandsFor`, command-kit.ts).
 */
interface CommandGroup {
  readonly name: string;
  readonly load: (words?: readonly string[]) => Promise<(factory: Factory) => Command>;
  /** left out of the help and of suggestions */
  readonly hidden?: true;
}

/**
 * The command groups, in the order `govctl --help` lists them. To add a group, write
 * `src/cli/<group>/index.ts` exporting `create<Group>Command(factory)` and add one line here
 * (docs/architecture.md "How to add a command"). Each group's modules initialise on first use (the
 * bundle wraps them lazily): a run initialises and builds only the group it names.
 */
export const COMMAND_GROUPS: readonly CommandGroup[] = [
  { name: 'whoami', load: async () => (await import('./whoami/whoami.js')).createWhoamiCommand },
  { name: 'evidence', load: async (words) => (await import('./evidence/index.js')).loadEvidenceCommand(words) },
  { name: 'attest', load: async () => (await import('./attest/index.js')).createAttestCommand },
  { name: 'posture', load: async () => (await import('./posture/index.js')).createPostureCommand },
  { name: 'systems', load: async () => (await import('./systems/index.js')).createSystemsCommand },
  { name: 'gates', load: async () => (await import('./gates/index.js')).createGatesCommand },
  { name: 'derive', load: async () => (await import('./derive/index.js')).createDeriveCommand },
  { name: 'signing-key', load: async () => (await import('./signing-key/index.js')).createSigningKeyCommand },
  { name: 'config', load: async () => (await import('./config/index.js')).createConfigCommand },
  { name: 'serve', load: async () => (await import('./serve/index.js')).createServeCommand },
  { name: 'mcp', load: async () => (await import('./mcp/index.js')).createMcpCommand },
  { name: 'admin', load: async () => (await import('./admin/index.js')).createAdminCommand },
  { name: 'ledger', load: async () => (await import('./ledger/index.js')).createLedgerCommand },
  { name: 'completion', load: async () => (await import('./completion/index.js')).createCompletionCommand },
  { name: 'version', load: async () => (await import('./version/index.js')).createVersionCommand },
  { name: 'help', load: async () => (await import('./help/index.js')).createHelpCommand },
  // Hidden: what the completion scripts ask (completion/complete.ts).
  { name: '__complete', hidden: true, load: async () => (await import('./completion/index.js')).createCompleteCommand },
];

/** Groups that read the whole command tree: a run of theirs builds every group. */
const READS_THE_TREE = new Set(['help', 'completion', '__complete']);

/**
 * The groups a run needs: the one its first argument names, or all of them (the root's help, a
 * global option first, an unknown command and its suggestion, `help` and `completion`).
 */
export function groupsFor(argv: readonly string[]): readonly CommandGroup[] {
  const first = argv[0];
  const named = first === undefined || READS_THE_TREE.has(first) ? undefined : COMMAND_GROUPS.find((group) => group.name === first);
  return named ? [named] : COMMAND_GROUPS;
}

/** What the program tells main.ts about the run. */
export interface ProgramState {
  /** the command whose action ran (for `--on-error` and Ctrl-C handling) */
  actionCommand?: Command;
  /** the command whose parsing failed, for the error's hint */
  errorCommand?: Command;
}

/** The version, from package.json: `dist/cli` and `src/cli` are both two levels down. */
function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

/**
 * Builds the root command with the groups the run needs (all of them without `argv`), configured
 * for one run.
 */
export async function createProgram(factory: Factory, state: ProgramState, argv?: readonly string[]): Promise<Command> {
  const groups = argv === undefined ? COMMAND_GROUPS : groupsFor(argv);
  const creators = await Promise.all(groups.map((group) => group.load(argv?.[0] === group.name ? argv.slice(1) : undefined)));
  const program = new Command('govctl')
    .description('Record AI-governance evidence and attestations, and gate releases on them.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .option('--json', "print JSON on stdout: the service's response body (one document per run)")
    .option('--no-color', 'no colour (also NO_COLOR=1)')
    .option('-v, --verbose', 'trace each HTTP request on stderr (the API key masked)')
    .option('-q, --quiet', 'errors and warnings only on stderr: no notices, progress or summaries (stdout unchanged)')
    .option('--timeout <seconds|duration>', 'how long each request may take: 30, 90s, 2m (GOVCTL_TIMEOUT; default 15 s)')
    .option('--config <file>', 'use this config file (any format, JavaScript included) instead of searching for a project config')
    .option('--base-url <url>', 'the service, or "local" for the embedded store (SERVICE_BASE_URL)')
    .option('--api-key-file <file|->', 'read the API key from a file or stdin (SERVICE_API_KEY)')
    .option('--workspace <id>', "workspace id (SERVICE_WORKSPACE_ID; default: the API key's)")
    .option('--system <name>', 'AI system name (SERVICE_SYSTEM_NAME)')
    .option('--agent <name>', 'agent name for attestations (SERVICE_AGENT_NAME; default: the system)')
    .option('--signing-key-file <file|->', 'sign with the key in this file (SERVICE_SIGNING_KEY)')
    .addOption(new Option('--on-error <mode>', 'what a failed write does (SERVICE_ON_ERROR; default raise)').choices(ON_ERROR_MODES))
    .option('--data-dir <dir>', 'directory of the embedded store (GOVCTL_DATA_DIR; default $XDG_DATA_HOME/govctl)')
    .option('--ledger-key <vkey>', 'the pinned verifier key of the transparency log (GOVCTL_LEDGER_KEY)')
    // Never a way to pass the key: it would be visible in `ps` and shell history. Caught in preAction.
    .addOption(new Option('--api-key [key]').hideHelp())
    .showSuggestionAfterError(true)
    .helpCommand(false);

  creators.forEach((create, i) => program.addCommand(create(factory), { hidden: groups[i].hidden === true }));

  addExamples(program, [
    'govctl whoami',
    'govctl evidence add ai_risk_assessment --help',
    'govctl evidence list --system loan-scorer --days 30',
    'govctl attest summarise --input prompt.txt --output answer.txt --system loan-scorer',
    'govctl evidence list --json | jq ".records[].record_id"',
  ]);
  program.addHelpText(
    'after',
    '\nSettings come from flags, then GOVCTL_* or SERVICE_* environment variables (`govctl help environment`),\n' +
      'then --config FILE or .govctlrc (searched ' +
      'upward; data only; it gets your API key for its host only after `govctl config trust-host URL`),\n' +
      'then $XDG_CONFIG_HOME/govctl/config.json. With none, commands use a local store in $XDG_DATA_HOME/govctl.\n' +
      `\nExit codes: ${exitCodeSummary()} (\`govctl help exit-codes\`).\n`,
  );

  program.hook('preAction', (_root, actionCommand) => {
    state.actionCommand = actionCommand;
    if (program.opts().apiKey !== undefined) {
      throw new UsageError('--api-key is not accepted: a key on the command line shows in `ps` and shell history', {
        field: '--api-key',
        hint: 'use --api-key-file FILE (or - for stdin) or set SERVICE_API_KEY',
      });
    }
  });

  configureTree(program, factory.io, state);
  return program;
}

/**
 * Applies the run's settings to a command and all its subcommands (commander copies them only
 * to commands made with `.command()`, not to ones added with `.addCommand()`).
 */
function configureTree(command: Command, io: IO, state: ProgramState): void {
  // Help is wrapped to the terminal (80 columns when not on one, as commander does): commander
  // wraps its own part; the text added after it (notes, settings) is wrapped here, on its way out.
  const width = (stream: IO['stdout']) => (stream.isTTY && stream.columns ? stream.columns : 80);
  command
    .exitOverride()
    .configureOutput({
      // A closed stdout is noticed again when main flushes; here it must not become an unhandled rejection.
      writeOut: (text) => void io.stdout.write(wrapHelpText(text, width(io.stdout))).catch(() => undefined),
      writeErr: (text) => void io.stderr.write(wrapHelpText(text, width(io.stderr))).catch(() => undefined),
      getOutHelpWidth: () => width(io.stdout),
      getErrHelpWidth: () => width(io.stderr),
      // main.ts renders the error (once, as text or JSON); here only remember where it happened.
      outputError: () => {
        state.errorCommand ??= command;
      },
    })
    // The global options are shown once, in the root's help and `govctl help options`.
    .configureHelp({ showGlobalOptions: false, sortSubcommands: false });
  // Bare groups print their help; unknown subcommands get a did-you-mean (subcommands.ts).
  guardGroup(command);
  if (command.parent) command.addHelpText('after', 'Global options (--json, --system, …): `govctl help options`.');
  for (const sub of command.commands) configureTree(sub, io, state);
}
