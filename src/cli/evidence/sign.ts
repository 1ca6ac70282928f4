/**
 * `govctl evidence sign [file|-] --workspace WS`: offline, prints each record with `client_sig`
 * and `client_sig_algo` added (docs/wire-format.md "client_sig"), one JSON line per record. Reads one object, an array or
 * NDJSON losslessly, so the signature covers the numbers exactly as written (docs/wire-format.md).
 */
import { Command } from 'commander';
import { CLIENT_SIG_ALGO, isPlainObject, isoNow, signClientSig, stringifyJson, validateRecord } from '../../core/index.js';
import { addExamples } from '../command-kit.js';
import { DataError } from '../errors.js';
import type { Factory } from '../factory.js';
import { readJsonDocuments } from '../input.js';
import { plural } from '../render.js';

/** Options of `evidence sign`. */
export interface EvidenceSignOptions {
  /** a file, `-` for stdin, or undefined (stdin when it is not a terminal) */
  file?: string;
}

export function createEvidenceSignCommand(factory: Factory): Command {
  const command = new Command('sign')
    .description('offline: add client_sig (HMAC-SHA256) to each record and print it, one JSON line per record')
    .argument('[file|-]', 'records: one object, an array, or NDJSON (default: stdin)')
    .action(async (file: string | undefined) => run({ file }, factory));
  return addExamples(command, [
    'SERVICE_SIGNING_KEY=$(cat key.hex) govctl evidence sign records.ndjson --workspace ws_123 > signed.ndjson',
    'cat record.json | govctl evidence sign - --workspace ws_123 --signing-key-file key.hex',
  ]);
}

/**
 * Signs every record or none: a record that is not a valid evidence record (docs/wire-format.md "Evidence records") is reported
 * with its index and nothing is printed (65). `occurred_at` is added when absent (the signature
 * covers it), `system_name` is taken from `--system` when absent, and an existing `client_sig`
 * is replaced.
 */
export async function run(options: EvidenceSignOptions, deps: Factory): Promise<void> {
  const workspaceId = await deps.offlineWorkspaceId('evidence sign');
  const key = await deps.requireSigningKey('evidence sign');
  const settings = await deps.settings();
  const documents = await readJsonDocuments(options.file, deps, 'the records');
  const problems: string[] = [];
  const signed: Record<string, unknown>[] = [];
  documents.forEach((document, index) => {
    if (!isPlainObject(document)) {
      problems.push(`#${index}: not a JSON object`);
      return;
    }
    const { client_sig: _sig, client_sig_algo: _algo, ...record } = document as Record<string, unknown>;
    if (record.occurred_at === undefined || record.occurred_at === null) record.occurred_at = isoNow(deps.clock());
    if ((record.system_name === undefined || record.system_name === null) && settings.systemName) record.system_name = settings.systemName;
    const issues = validateRecord(record);
    if (issues.length > 0) {
      problems.push(`#${index}: ${issues.map((found) => `${found.path} ${found.message}`).join(', ')}`);
      return;
    }
    record.client_sig = signClientSig(record, workspaceId, key);
    record.client_sig_algo = CLIENT_SIG_ALGO;
    signed.push(record);
  });
  if (problems.length > 0) {
    throw new DataError(
      `cannot sign: ${problems.length} of ${plural(documents.length, 'record')} ${problems.length === 1 ? 'is' : 'are'} invalid: ${problems.slice(0, 20).join('; ')}${problems.length > 20 ? '; …' : ''}`,
      {
        code: 'validation_error',
        hint: 'fix the records and sign again (nothing was printed)',
      },
    );
  }
  const out = deps.io.stdout;
  for (const record of signed) await out.write(stringifyJson(record) + '\n');
}
