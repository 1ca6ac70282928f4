/**
 * `govctl help environment`: every environment variable the command line reads, from the one table
 * the code reads them through (src/cli/environment.ts).
 */
import { Command } from 'commander';
import { addExamples } from '../command-kit.js';
import { ENVIRONMENT } from '../environment.js';
import type { Factory } from '../factory.js';
import { printJson, printTable, type Column } from '../render.js';

/** What `--json` prints. */
export interface EnvironmentReport {
  environment: { name: string; also: string | null; setting: string | null; what: string }[];
}

export function createHelpEnvironmentCommand(factory: Factory): Command {
  const command = new Command('environment').description('print every environment variable govctl reads, and what each does').action(async () => run(factory));
  command.addHelpText(
    'after',
    "\nA setting's GOVCTL_ name wins over its SERVICE_ name (the specification's) when both are set. A base URL and an\n" +
      'API key from the environment must be of one family: GOVCTL_BASE_URL with GOVCTL_API_KEY, SERVICE_BASE_URL with\n' +
      "SERVICE_API_KEY (78 otherwise), so a SERVICE_API_KEY meant for another service never goes to govctl's host.\n" +
      'Flags win over the environment, which wins over config files.\n' +
      '\nPiped, one line per variable: name<TAB>also read<TAB>what. --json prints {environment: [{name, also, setting, what}]}.\n',
  );
  return addExamples(command, ['govctl help environment', 'govctl help environment --json | jq -r ".environment[].name"']);
}

type Row = (typeof ENVIRONMENT)[number];

const COLUMNS: readonly Column<Row>[] = [
  { header: 'variable', value: (row) => row.name },
  { header: 'also', value: (row) => row.alias ?? '' },
  { header: 'what', value: (row) => row.what },
];

async function run(deps: Factory): Promise<void> {
  const out = deps.io.stdout;
  if (deps.globals.json === true) {
    const report: EnvironmentReport = {
      environment: ENVIRONMENT.map((row) => ({ name: row.name, also: row.alias ?? null, setting: row.setting ?? null, what: row.what })),
    };
    return printJson(out, report);
  }
  await printTable(out, COLUMNS, ENVIRONMENT, { now: deps.clock });
}
