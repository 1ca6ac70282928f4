/**
 * `govctl attest verify [file|-] --workspace WS`: offline, checks each attestation's `witness_sig`
 * against its own `verifying_key_hex` (wire.md §4; the canonical form, or the legacy
 * `<input_hash>:<output_hash>:<executed_at>` form). Exit 2 when any does not verify.
 * `--public-key HEX` (repeatable) pins the keys an auditor trusts: a record signed by any other key
 * does not verify, since anyone can sign with a key of their own.
 */
import { Command, InvalidArgumentError } from 'commander';
import { isPlainObject, verifyWitness } from '../../core/index.js';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { readJsonDocuments } from '../input.js';
import { reportVerification, type VerifyResult } from '../verify-report.js';

/** Options of `attest verify`. */
export interface AttestVerifyOptions {
  file?: string;
  json: boolean;
  /** trusted Ed25519 public keys (lower-case hex); none given: the record's own key is used */
  publicKeys: string[];
}

function collectPublicKey(value: string, previous: string[]): string[] {
  if (!/^[0-9a-fA-F]{64}$/.test(value)) throw new InvalidArgumentError('must be an Ed25519 public key: 64 hex characters (govctl signing-key public)');
  return [...previous, value.toLowerCase()];
}

export function createAttestVerifyCommand(factory: Factory): Command {
  const command = new Command('verify')
    .description('offline: check witness_sig of each attestation against its verifying_key_hex; exit 2 if any does not verify')
    .argument('[file|-]', 'attestations: one object, an array, or NDJSON (default: stdin)')
    .option('--public-key <hex>', 'trust only this Ed25519 public key (repeatable)', collectPublicKey, [])
    .action(async (file: string | undefined, flags: { publicKey: string[] }) =>
      run({ file, json: factory.globals.json === true, publicKeys: flags.publicKey }, factory),
    );
  return addExamples(command, ['govctl attest verify attestations.ndjson --workspace ws_123', 'govctl attest verify runs.ndjson --workspace ws_123 --public-key "$(govctl signing-key public)"', 'govctl attest sign t --input a --output b --system s --workspace ws_1 | govctl attest verify - --workspace ws_1']);
}

/** Verifies one attestation; one without a signature does not verify. */
export function verifyAttestation(document: unknown, index: number, workspaceId: string, trusted: readonly string[] = []): VerifyResult {
  if (!isPlainObject(document)) return { index, status: 'invalid', reason: 'not a JSON object' };
  const result: VerifyResult = { index, status: 'valid' };
  if (typeof document.tool_name === 'string') result.tool_name = document.tool_name;
  if (typeof document.system_name === 'string') result.system_name = document.system_name;
  if (document.witness_sig === undefined || document.witness_sig === null) {
    result.status = 'unsigned';
    return result;
  }
  const key = typeof document.verifying_key_hex === 'string' ? document.verifying_key_hex.toLowerCase() : '';
  if (trusted.length > 0 && !trusted.includes(key)) {
    result.status = 'invalid';
    result.reason = 'signed by a key not given with --public-key';
    return result;
  }
  const form = verifyWitness(document, workspaceId);
  if (form === null) result.status = 'invalid';
  else result.form = form;
  return result;
}

export async function run(options: AttestVerifyOptions, deps: Factory): Promise<void> {
  const workspaceId = await deps.offlineWorkspaceId('attest verify');
  const documents = await readJsonDocuments(options.file, deps, 'the attestations');
  const results = documents.map((document, index) => verifyAttestation(document, index, workspaceId, options.publicKeys));
  await reportVerification(deps, results, { kind: 'attestation', json: options.json });
}
