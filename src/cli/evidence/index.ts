/**
 * `govctl evidence`: GRC evidence records (docs/cli.md).
 */
import { Command } from 'commander';
import { addExamples, commandsFor } from '../command-kit.js';
import type { Factory } from '../factory.js';

/**
 * The subcommands, in the order of the help, each module loaded only when a run needs it: `add`
 * builds a command per record type from the catalogue, and `add`, `import`, `sign` and `verify`
 * bring in signing (node:crypto), none of which `evidence list` uses.
 */
const EVIDENCE_SUBCOMMANDS: readonly { name: string; load: () => Promise<(factory: Factory) => Command> }[] = [
  { name: 'add', load: async () => (await import('./add.js')).createEvidenceAddCommand },
  { name: 'export', load: async () => (await import('./export.js')).createEvidenceExportCommand },
  { name: 'import', load: async () => (await import('./import.js')).createEvidenceImportCommand },
  { name: 'list', load: async () => (await import('./list.js')).createEvidenceListCommand },
  { name: 'sign', load: async () => (await import('./sign.js')).createEvidenceSignCommand },
  { name: 'verify', load: async () => (await import('./verify.js')).createEvidenceVerifyCommand },
];

/** Loads the subcommands that `words` (what follows `evidence`; undefined: all) need, and returns the group's creator. */
export async function loadEvidenceCommand(words?: readonly string[]): Promise<(factory: Factory) => Command> {
  const creators = await Promise.all(commandsFor(EVIDENCE_SUBCOMMANDS, words).map((subcommand) => subcommand.load()));
  return (factory) => {
    const evidence = new Command('evidence').description('add, import, export, list, sign and verify GRC evidence records');
    for (const create of creators) evidence.addCommand(create(factory));
    return addExamples(evidence, [
      'govctl evidence add --help',
      'govctl evidence import records.ndjson',
      'govctl evidence export > records.ndjson',
      'govctl evidence list --system loan-scorer',
      'govctl evidence sign records.ndjson --workspace ws_123 | govctl evidence verify - --workspace ws_123',
    ]);
  };
}
