/**
 * `govctl evidence`: GRC evidence records (design/cli.md "Commands").
 */
import { Command } from 'commander';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { createEvidenceAddCommand } from './add.js';
import { createEvidenceExportCommand } from './export.js';
import { createEvidenceImportCommand } from './import.js';
import { createEvidenceListCommand } from './list.js';
import { createEvidenceSignCommand } from './sign.js';
import { createEvidenceVerifyCommand } from './verify.js';

export function createEvidenceCommand(factory: Factory): Command {
  const evidence = new Command('evidence').description('add, import, export, list, sign and verify GRC evidence records');
  evidence.addCommand(createEvidenceAddCommand(factory));
  evidence.addCommand(createEvidenceExportCommand(factory));
  evidence.addCommand(createEvidenceImportCommand(factory));
  evidence.addCommand(createEvidenceListCommand(factory));
  evidence.addCommand(createEvidenceSignCommand(factory));
  evidence.addCommand(createEvidenceVerifyCommand(factory));
  return addExamples(evidence, [
    'govctl evidence add --help',
    'govctl evidence import records.ndjson',
    'govctl evidence export > records.ndjson',
    'govctl evidence list --system loan-scorer',
    'govctl evidence sign records.ndjson --workspace ws_123 | govctl evidence verify - --workspace ws_123',
  ]);
}
