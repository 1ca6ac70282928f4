/** `govctl gates check`: the command's flags, help and examples; the work is check.ts's {@link run}. */
import { Command, Option } from 'commander';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { GATE_FORMATS, run } from './check.js';
import { resolveFormat } from './resolve-format.js';
import { FAIL_ON, type FailOn } from '../gate-verdict.js';

export function createGatesCheckCommand(factory: Factory): Command {
  const command = new Command('check')
    .description('check the release gates; the exit code is the verdict (GET grc/gates/check)')
    .addOption(
      new Option('--fail-on <level>', 'which failures fail the run: soft (any failing gate), hard (blocking ones only), never')
        .choices(FAIL_ON)
        .default('soft'),
    )
    .addOption(
      new Option(
        '--format <format>',
        'table (a list on a terminal, tab-separated when piped), json (the body), junit (XML), github (Actions annotations)',
      ).choices(GATE_FORMATS),
    )
    .action(async (flags: { failOn: FailOn; format?: string }) =>
      run({ failOn: flags.failOn, format: resolveFormat(flags.format, factory.globals.json === true) }, factory),
    );
  command.addHelpText(
    'after',
    '\nExit codes: 0 every gate passes (or --fail-on lets the failures pass), 1 a non-blocking gate fails,\n' +
      '2 a blocking gate fails, 69 the service cannot be reached, answers 5xx or a reply that is not a gate\n' +
      'list, 77 the API key is refused, 78 nothing is configured in CI. --on-error does not apply: a gate fails closed.\n' +
      '\nOn a terminal, one line per gate with its reason below. Piped, tab-separated: gate_id, result (pass,\n' +
      'soft, hard), exit_code, name, reason.\n' +
      'With --format github and GITHUB_STEP_SUMMARY set, a Markdown summary is appended to that file.\n',
  );
  return addExamples(command, [
    'govctl gates check',
    'govctl gates check --fail-on hard',
    'govctl gates check --format junit > gates.xml',
    'govctl gates check --format github',
    "govctl gates check --json | jq -r '.gates[] | select(.passing | not) | .reason'",
  ]);
}
