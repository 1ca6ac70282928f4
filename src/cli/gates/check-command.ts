/** `govctl gates check`: the command's flags, help and examples; the work is check.ts's {@link run}. */
import { Command, Option } from 'commander';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { GATE_FORMATS, run } from './check.js';
import { resolveFormat } from './resolve-format.js';
import { FAIL_ON, type FailOn } from './verdict.js';
import { InvalidArgumentError } from 'commander';
import { parseSubject, type VerdictSubject } from '../../core/verdicts.js';
import { UsageError } from '../errors.js';

/** `--subject NAME=sha256:HEX`, repeatable: each one parsed as it comes, so a bad one is a usage error naming it. */
function collectSubject(value: string, previous: VerdictSubject[]): VerdictSubject[] {
  try {
    return [...previous, parseSubject(value)];
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

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
    .option('--subject <name=sha256:hex>', 'an artifact the verdict is about (repeatable; with --attest)', collectSubject, [])
    .option('--attest <file>', 'write the signed verdict (a DSSE envelope of an in-toto statement) to FILE, failing or not (with --subject)')
    .action(async (flags: { failOn: FailOn; format?: string; subject: VerdictSubject[]; attest?: string }) => {
      if (flags.subject.length > 0 !== (flags.attest !== undefined)) {
        throw new UsageError('--subject and --attest go together: a signed verdict names its artifacts and is written to a file', {
          field: flags.attest === undefined ? '--attest' : '--subject',
          hint: 'govctl gates check --subject NAME=sha256:HEX --attest verdict.json',
        });
      }
      return run(
        {
          failOn: flags.failOn,
          format: resolveFormat(flags.format, factory.globals.json === true),
          ...(flags.attest !== undefined ? { subjects: flags.subject, attest: flags.attest } : {}),
        },
        factory,
      );
    });
  command.addHelpText(
    'after',
    '\nExit codes: 0 every gate passes (or --fail-on lets the failures pass), 1 a non-blocking gate fails,\n' +
      '2 a blocking gate fails, 69 the service cannot be reached, answers 5xx or a reply that is not a gate\n' +
      'list, 77 the API key is refused, 78 nothing is configured in CI. --on-error does not apply: a gate fails closed.\n' +
      '\nOn a terminal, one line per gate with its reason below. Piped, tab-separated: gate_id, result (pass,\n' +
      'soft, hard), exit_code, name, reason.\n' +
      'With --format github and GITHUB_STEP_SUMMARY set, a Markdown summary is appended to that file.\n' +
      'With --subject and --attest, the service signs the verdict about the artifacts and logs it; the envelope is\n' +
      'written to FILE whatever the gates say (docs/ci.md); check it with `govctl gates verify-attestation`.\n',
  );
  return addExamples(command, [
    'govctl gates check',
    'govctl gates check --fail-on hard',
    'govctl gates check --format junit > gates.xml',
    'govctl gates check --format github',
    'govctl gates check --subject ghcr.io/acme/app=sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 --attest verdict.json',
    "govctl gates check --json | jq -r '.gates[] | select(.passing | not) | .reason'",
  ]);
}
