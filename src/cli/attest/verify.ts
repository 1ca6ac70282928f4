/**
 * `govctl attest verify [file|-] --workspace WS`: offline, checks each attestation's `witness_sig`
 * against its own `verifying_key_hex` (docs/wire-format.md; the canonical form, or with `executed_at` the
 * legacy `<input_hash>:<output_hash>:<executed_at>` form). `--remote` checks the attestations the
 * service holds instead: it lists them (each with its record as stored) and verifies each record
 * here, with core's check, never trusting the service's `signed_text`, form or fingerprint (each
 * must match what is recomputed here). Exit 2 when any does not verify.
 * `--public-key HEX` (repeatable) pins the keys an auditor trusts: a record signed by any other key
 * does not verify, since anyone can sign with a key of their own.
 */
import { Command, InvalidArgumentError } from 'commander';
import type { AttestationQuery, StoredAttestation } from '../../client/wire-types.js';
import { storedAttestations, verifyAttestationSignature, verifyStoredAttestation } from '../../client/verify/index.js';
import { addExamples } from '../command-kit.js';
import { InterruptedError, UsageError } from '../errors.js';
import type { Factory } from '../factory.js';
import { readJsonDocuments } from '../input.js';
import { reportVerification, type VerifyResult } from '../verify-report.js';
import { daysOption, MAX_PAGE, toolOption } from './list.js';

/** Options of `attest verify`. */
export interface AttestVerifyOptions {
  file?: string;
  json: boolean;
  /** trusted Ed25519 public keys (lower-case hex); none given: the record's own key is used */
  publicKeys: string[];
  remote?: boolean;
  /** `--remote` filters */
  system?: string;
  tool?: string;
  days?: number;
}

function collectPublicKey(value: string, previous: string[]): string[] {
  if (!/^[0-9a-fA-F]{64}$/.test(value)) throw new InvalidArgumentError('must be an Ed25519 public key: 64 hex characters (govctl signing-key public)');
  return [...previous, value.toLowerCase()];
}

export function createAttestVerifyCommand(factory: Factory): Command {
  const command = new Command('verify')
    .description('check witness_sig of each attestation given (offline), or of the stored ones (--remote); exit 2 if any does not verify')
    .argument('[file|-]', 'attestations: one object, an array, or NDJSON (default: stdin)')
    .option('--public-key <hex>', 'trust only this Ed25519 public key (repeatable)', collectPublicKey, [])
    .option('--remote', 'verify the attestations stored in the service (as stored, signature and key included)')
    .addOption(toolOption())
    .addOption(daysOption())
    .action(async (file: string | undefined, flags: { publicKey: string[]; remote?: boolean; tool?: string; days?: number }) => {
      const remote = flags.remote === true;
      const settings = remote ? await factory.settings() : undefined;
      await run(
        {
          file,
          json: factory.globals.json === true,
          publicKeys: flags.publicKey,
          remote,
          ...(settings?.sources.systemName?.kind === 'flag' && settings.systemName !== undefined ? { system: settings.systemName } : {}),
          ...(flags.tool !== undefined ? { tool: flags.tool } : {}),
          ...(flags.days !== undefined ? { days: flags.days } : {}),
        },
        factory,
      );
    });
  command.addHelpText('after', '\n--tool and --days go with --remote (and the global --system). Unsigned attestations count as not verifying.\n');
  return addExamples(command, [
    'govctl attest verify attestations.ndjson --workspace ws_123',
    'govctl attest verify runs.ndjson --workspace ws_123 --public-key "$(govctl signing-key public)"',
    'govctl attest sign t --input a --output b --system s --workspace ws_1 | govctl attest verify - --workspace ws_1',
    'govctl attest verify --remote --system loan-scorer --public-key "$(govctl signing-key public)"',
  ]);
}

async function runRemote(options: AttestVerifyOptions, deps: Factory): Promise<void> {
  if (options.file !== undefined) throw new UsageError('--remote verifies stored attestations and takes no file', { hint: 'drop the file, or drop --remote' });
  const api = await deps.api();
  const workspaceId = await deps.workspaceId();
  const query: AttestationQuery = { limit: MAX_PAGE };
  if (options.system !== undefined) query.system_name = options.system;
  if (options.tool !== undefined) query.tool_name = options.tool;
  if (options.days !== undefined) query.days = options.days;
  const results: VerifyResult[] = [];
  // each stored attestation read strictly: one that is not what the service writes does not verify
  for await (const page of storedAttestations(api, { ...query })) {
    if (deps.signal.aborted) throw new InterruptedError();
    for (const item of page) {
      const index = results.length;
      if ('problem' in item) {
        results.push({
          index,
          status: 'invalid',
          ...(item.id !== undefined ? { attestation_id: item.id } : {}),
          reason: `not an attestation the service writes: ${item.problem}`,
        });
      } else results.push(verifyStoredAttestation(item.record as unknown as StoredAttestation, index, workspaceId, options.publicKeys));
    }
  }
  await reportVerification(deps, results, { kind: 'attestation', json: options.json, remote: true });
}

export async function run(options: AttestVerifyOptions, deps: Factory): Promise<void> {
  if (options.remote) return runRemote(options, deps);
  if (options.tool !== undefined || options.days !== undefined)
    throw new UsageError('--tool and --days go with --remote', { hint: 'add --remote to verify stored attestations' });
  const workspaceId = await deps.offlineWorkspaceId('attest verify');
  const documents = await readJsonDocuments(options.file, deps, 'the attestations');
  const results = documents.map((document, index) => verifyAttestationSignature(document, index, workspaceId, options.publicKeys));
  await reportVerification(deps, results, { kind: 'attestation', json: options.json });
}
