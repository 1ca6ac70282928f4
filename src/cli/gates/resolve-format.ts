/** `govctl gates check`'s output format from its flags (check-command.ts and the fast path). */
import { UsageError } from '../errors.js';
import type { GateFormat } from './check.js';

/** The `--format` and `--json` flags together; both naming different formats is a usage error. */
export function resolveFormat(format: string | undefined, json: boolean): GateFormat {
  if (json && format !== undefined && format !== 'json') {
    throw new UsageError(`--json and --format ${format} ask for different outputs`, { field: '--format', hint: 'give one of them (--json is --format json)' });
  }
  return json ? 'json' : ((format as GateFormat | undefined) ?? 'table');
}
