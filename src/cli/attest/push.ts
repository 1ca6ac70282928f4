/**
 * `govctl attest <tool-name> …` (short for `govctl attest push <tool-name> …`): hash (streaming
 * SHA-256), sign (with a signing key) and push one attestation (POST attestations/external,
 * docs/service.md "POST …/attestations/external"). `push` is the group's default subcommand, so that `attest sign` and `attest batch`
 * keep options of their own.
 */
import { Command } from 'commander';
import { addExamples, markWrite } from '../command-kit.js';
import type { AttestationResultBody } from '../../client/wire-types.js';
import type { Factory } from '../factory.js';
import { printJson } from '../render.js';
import { terminalText } from '../terminal-text.js';
import { attestOptions, buildAttestationFromFlags, type AttestFlags } from './build.js';

/** Options of `attest <tool-name>`. */
export interface AttestPushOptions extends AttestFlags {
  toolName: string;
  json: boolean;
}

export function createAttestPushCommand(factory: Factory): Command {
  const command = new Command('push')
    .description('hash, sign and push one attestation (the default: `govctl attest <tool-name>` means `govctl attest push <tool-name>`)')
    .argument('<tool-name>', 'the tool or agent step that ran');
  for (const option of attestOptions()) command.addOption(option);
  command.action(async (toolName: string, opts: AttestFlags) => run({ ...opts, toolName, json: factory.globals.json === true }, factory));
  markWrite(command);
  return addExamples(command, [
    'govctl attest summarise --input prompt.txt --output answer.txt --system loan-scorer',
    'generate < in.txt | tee out.txt | govctl attest generate --input in.txt --output - --model-id gpt-4o',
    'govctl attest classify --input-hash $IN_SHA --output-hash $OUT_SHA --authorised-by alice@example.com --role reviewer',
    'govctl attest push batch --input a --output b   # a tool named like a subcommand',
  ]);
}

export async function run(options: AttestPushOptions, deps: Factory): Promise<void> {
  const key = await deps.signingKey();
  // Flags and files are checked before the service is touched.
  const record = await buildAttestationFromFlags(options.toolName, options, deps, key ? { key, workspaceId: () => deps.workspaceId() } : undefined);
  const api = await deps.api();
  const result = await api.postAttestation(record);
  await printResult(deps, result, record.tool_name, record.system_name, options.json);
}

async function printResult(deps: Factory, result: AttestationResultBody, tool: string, system: string, json: boolean): Promise<void> {
  const out = deps.io.stdout;
  if (json) return printJson(out, result);
  if (!out.isTTY) {
    await out.write(
      `${[result.attestation_id, result.trust_tier, result.external_verified, result.detail].map((value) => terminalText(String(value).replace(/[\t\r\n]+/g, ' '))).join('\t')}\n`,
    );
    return;
  }
  const c = out.color;
  await out.write(
    `${c.green('✓')} attested ${c.bold(terminalText(tool))} on ${terminalText(system)}: ${c.bold(terminalText(result.attestation_id))} (trust tier ${terminalText(String(result.trust_tier))}${result.external_verified ? ', signature verified' : ''})\n`,
  );
}
