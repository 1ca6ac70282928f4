/**
 * `govctl attest verify [file|-] --workspace WS`: offline, checks each attestation's `witness_sig`
 * against its own `verifying_key_hex` (wire.md §4; the canonical form, or the legacy
 * `<input_hash>:<output_hash>:<executed_at>` form). Exit 2 when any does not verify.
 */
import { Command } from 'commander';
import { isPlainObject, verifyWitness } from '../../core/index.js';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { readJsonDocuments } from '../input.js';
import { reportVerification, type VerifyResult } from '../verify-report.js';

/** Options of `attest verify`. */
export interface AttestVerifyOptions {
  file?: string;
  json: boolean;
}

export function createAttestVerifyCommand(factory: Factory): Command {
  const command = new Command('verify')
    .description('offline: check witness_sig of each attestation against its verifying_key_hex; exit 2 if any does not verify')
    .argument('[file|-]', 'attestations: one object, an array, or NDJSON (default: stdin)')
    .action(async (file: string | undefined) => run({ file, json: factory.globals.json === true }, factory));
  return addExamples(command, ['govctl attest verify attestations.ndjson --workspace ws_123', 'govctl attest sign t --input a --output b --system s --workspace ws_1 | govctl attest verify - --workspace ws_1']);
}

/** Verifies one attestation; one without a signature does not verify. */
export function verifyAttestation(document: unknown, index: number, workspaceId: string): VerifyResult {
  if (!isPlainObject(document)) return { index, status: 'invalid', reason: 'not a JSON object' };
  const result: VerifyResult = { index, status: 'valid' };
  if (typeof document.tool_name === 'string') result.tool_name = document.tool_name;
  if (typeof document.system_name === 'string') result.system_name = document.system_name;
  if (document.witness_sig === undefined || document.witness_sig === null) {
    result.status = 'unsigned';
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
  const results = documents.map((document, index) => verifyAttestation(document, index, workspaceId));
  await reportVerification(deps, results, { kind: 'attestation', json: options.json });
}
