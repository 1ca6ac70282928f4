/**
 * `govctl gates verify-attestation FILE --subject sha256:HEX`: checks a signed gate verdict for one
 * artifact (src/client/verify/verdict.ts): the DSSE signature over PAE with the pinned verdict
 * key, the in-toto statement, the artifact among its subjects, and a passing result. With `--key`
 * or `--key-file` it needs no service at all; without, it asks the service for its key, which
 * proves only that this service signed it. Exit 0, or 2 naming the reason (docs/ci.md).
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Command } from 'commander';
import { publicKeyHex, verifyVerdict, VerdictRejectedError, type VerifiedVerdict } from '../../client/verify/verdict.js';
import { addExamples } from '../command-kit.js';
import { AttestationRejectedError, InputFileError, UsageError } from '../errors.js';
import type { Factory } from '../factory.js';
import { printFields, printJson } from '../render.js';
import { displayPath } from '../settings.js';
import { terminalText } from '../terminal-text.js';

export interface VerifyAttestationOptions {
  file: string;
  /** the artifact's digest: `sha256:HEX` or HEX */
  subject: string;
  /** the verdict key, hex or PEM */
  key?: string;
  /** a file holding the verdict key, hex or PEM */
  keyFile?: string;
  /** also accept exit code 1 */
  allowSoftFail: boolean;
  json: boolean;
}

const DIGEST = /^(sha256:)?[0-9a-fA-F]{64}$/;

async function readText(file: string, what: string, flag: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new InputFileError(`cannot read ${what} ${displayPath(file)} (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { field: flag });
  }
}

/** The key to verify with: given, from a file, or (online) the service's. */
async function verdictKey(options: VerifyAttestationOptions, deps: Factory): Promise<{ key: string; fromService: boolean }> {
  const given = options.key ?? (options.keyFile !== undefined ? await readText(resolve(deps.cwd, options.keyFile), 'the key file', '--key-file') : undefined);
  if (given !== undefined) {
    try {
      return { key: publicKeyHex(given), fromService: false };
    } catch (error) {
      throw new UsageError(`${options.key !== undefined ? '--key' : `--key-file ${displayPath(options.keyFile!)}`}: ${(error as Error).message}`, {
        field: options.key !== undefined ? '--key' : '--key-file',
      });
    }
  }
  return { key: (await (await deps.api()).verdictKey()).public_key, fromService: true };
}

export async function run(options: VerifyAttestationOptions, deps: Factory): Promise<void> {
  if (!DIGEST.test(options.subject)) throw new UsageError('--subject is the artifact digest, sha256:HEX (64 hex digits)', { field: '--subject' });
  if (options.key !== undefined && options.keyFile !== undefined) throw new UsageError('give --key or --key-file, not both', { field: '--key' });
  const file = resolve(deps.cwd, options.file);
  const text = await readText(file, 'the verdict', 'FILE');
  const { key, fromService } = await verdictKey(options, deps);
  let verified: VerifiedVerdict;
  try {
    verified = verifyVerdict(text, { key, subjectSha256: options.subject, allowSoftFail: options.allowSoftFail });
  } catch (error) {
    if (error instanceof VerdictRejectedError) {
      throw new AttestationRejectedError(`${displayPath(file)}: ${terminalText(error.message)} (${error.reason})`, {
        hint:
          error.reason === 'unknown_key'
            ? 'pin the key of the service that signs your verdicts (`govctl gates verdict-key --format pem`)'
            : error.reason === 'failing_verdict'
              ? 'the gates failed when this verdict was made: record the evidence they name and check again'
              : undefined,
      });
    }
    throw error;
  }
  if (fromService) await deps.note('verified with the key the service publishes; pin it with --key to check without trusting the service');
  const out = deps.io.stdout;
  const summary = {
    verified: true,
    verdict_id: verified.verdictId,
    workspace_id: verified.workspaceId,
    exit_code: verified.exitCode,
    time_verified: verified.timeVerified,
    subject: verified.subject,
    keyid: verified.keyid,
  };
  if (options.json) return printJson(out, summary);
  await printFields(out, [
    ['verdict', verified.verdictId],
    ['subject', `${verified.subject.name}@sha256:${verified.subject.sha256}`],
    ['exit code', String(verified.exitCode)],
    ['verified at', verified.timeVerified],
    ['key id', verified.keyid],
  ]);
}

export function createVerifyAttestationCommand(factory: Factory): Command {
  const command = new Command('verify-attestation')
    .description('check a signed gate verdict for an artifact: signature, statement, subject, result (offline with --key)')
    .argument('<file>', 'the verdict: the DSSE envelope `gates check --attest` wrote')
    .requiredOption('--subject <sha256:hex>', "the artifact's digest")
    .option('--key <key>', 'the verdict key: 64 hex digits or a PEM public key (`gates verdict-key`)')
    .option('--key-file <file>', 'a file holding the verdict key (hex or PEM)')
    .option('--allow-soft-fail', 'also accept a verdict whose only failing gates are non-blocking (exit code 1)', false)
    .action(async (file: string, flags: { subject: string; key?: string; keyFile?: string; allowSoftFail: boolean }) =>
      run(
        {
          file,
          subject: flags.subject,
          ...(flags.key !== undefined ? { key: flags.key } : {}),
          ...(flags.keyFile !== undefined ? { keyFile: flags.keyFile } : {}),
          allowSoftFail: flags.allowSoftFail,
          json: factory.globals.json === true,
        },
        factory,
      ),
    );
  command.addHelpText(
    'after',
    '\nExit codes: 0 the verdict is signed by the key, names the artifact and passed; 2 it does not, and the message\n' +
      'says why: another artifact (other_subject), an altered payload (altered), a key you did not pin (unknown_key),\n' +
      'a failing verdict (failing_verdict), not a verdict at all (malformed). 66 the file cannot be read.\n',
  );
  return addExamples(command, [
    'govctl gates verify-attestation verdict.json --subject sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 --key-file verdict-key.pem',
    'govctl gates verify-attestation verdict.json --subject "$DIGEST" --key "$GOVCTL_VERDICT_KEY" --allow-soft-fail',
  ]);
}
