/**
 * `govctl help exit-codes`: the exit code table of docs/cli.md. The table is data in one place,
 * `EXIT_CODE_MEANINGS` in src/cli/exit-codes.ts, beside the mapping that decides the codes;
 * docs/exit-codes.md mirrors it (a test keeps the two equal).
 */
import { Command } from 'commander';
import { addExamples } from '../command-kit.js';
import { EXIT_CODE_MEANINGS } from '../exit-codes.js';
import type { Factory } from '../factory.js';
import { printJson, printTable, type Column } from '../render.js';

export interface HelpExitCodesOptions {
  json: boolean;
}

/** What `--json` prints. */
export interface ExitCodesReport {
  exit_codes: { code: number; meaning: string }[];
}

export function createHelpExitCodesCommand(factory: Factory): Command {
  const command = new Command('exit-codes')
    .description('print the exit codes and what each means')
    .action(async () => run({ json: factory.globals.json === true }, factory));
  command.addHelpText('after', '\nPiped, one line per code: code<TAB>meaning. --json prints {exit_codes: [{code, meaning}]}.\n');
  return addExamples(command, ['govctl help exit-codes', 'govctl help exit-codes --json | jq ".exit_codes[] | select(.code == 69)"']);
}

type Row = (typeof EXIT_CODE_MEANINGS)[number];

const COLUMNS: readonly Column<Row>[] = [
  {
    header: 'code',
    value: (row) => String(row.code),
    style: (text, out, row) => (row.code === 0 ? out.color.green(text) : row.code <= 2 ? out.color.yellow(text) : out.color.red(text)),
  },
  { header: 'meaning', value: (row) => row.meaning, shrink: 'wrap' },
];

export async function run(options: HelpExitCodesOptions, deps: Factory): Promise<void> {
  const out = deps.io.stdout;
  if (options.json) {
    const report: ExitCodesReport = { exit_codes: EXIT_CODE_MEANINGS.map(({ code, meaning }) => ({ code, meaning })) };
    return printJson(out, report);
  }
  await printTable(out, COLUMNS, EXIT_CODE_MEANINGS, { now: deps.clock });
  if (out.isTTY) {
    await out.write(
      '\n`gates check` exits with the highest gate exit_code, lowered by --fail-on (hard: soft failures exit 0;\n' +
        'never: report only). A gate check that cannot reach the service exits 69, never 0 or 1.\n' +
        '`serve` exits 0 after a clean shutdown on SIGINT or SIGTERM. Details: docs/exit-codes.md.\n',
    );
  }
}
