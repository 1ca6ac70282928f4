/**
 * `govctl attest sign <tool-name> … --workspace WS`: offline, builds the attestation exactly as
 * `attest` would send it and prints it as one JSON line, with `witness_sig` and
 * `verifying_key_hex` (docs/wire-format.md) when a signing key is configured.
 */
import { Command } from 'commander';
import { stringifyJson } from '../../core/index.js';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { attestOptions, buildAttestationFromFlags, type AttestFlags } from './build.js';

/** Options of `attest sign`. */
export interface AttestSignOptions extends AttestFlags {
  toolName: string;
}

export function createAttestSignCommand(factory: Factory): Command {
  const command = new Command('sign')
    .description('offline: build (and with a signing key, sign) an attestation and print it as JSON')
    .argument('<tool-name>', 'the tool or agent step that ran');
  for (const option of attestOptions()) command.addOption(option);
  command.action(async (toolName: string, opts: AttestFlags) => run({ ...opts, toolName }, factory));
  return addExamples(command, [
    'govctl attest sign summarise --input prompt.txt --output answer.txt --system loan-scorer --workspace ws_123',
    'govctl attest sign summarise --input-hash $IN --output-hash $OUT --system loan-scorer --workspace ws_123 >> batch.ndjson',
  ]);
}

export async function run(options: AttestSignOptions, deps: Factory): Promise<void> {
  const workspaceId = await deps.offlineWorkspaceId('attest sign');
  const key = await deps.signingKey();
  const record = await buildAttestationFromFlags(options.toolName, options, deps, key ? { key, workspaceId: async () => workspaceId } : undefined);
  await deps.io.stdout.write(stringifyJson(record) + '\n');
}
