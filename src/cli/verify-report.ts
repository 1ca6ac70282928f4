/**
 * The report of `evidence verify` and `attest verify`: one row per record, then exit 2 when any
 * signature does not verify (docs/exit-codes.md). Unsigned records count as not verifying:
 * an auditor cannot tell them from records whose signature was stripped.
 */
import { DataError, SignatureMismatchError } from './errors.js';
import type { Factory } from './factory.js';
import { printBeforeVerdict } from './io.js';
import { plural, printJson, printTable, type Column } from './render.js';
import type { VerifyResult } from '../client/verify/index.js';

export type { VerifyResult };

function statusStyle(text: string, out: Parameters<NonNullable<Column<VerifyResult>['style']>>[1], row: VerifyResult): string {
  return row.status === 'valid' ? out.color.green(text) : out.color.red(text);
}

/** Describes a record for the error line: `#2 (ai_risk_assessment, loan-scorer)`. */
function label(result: VerifyResult): string {
  const what = [result.record_type ?? result.tool_name, result.system_name, result.record_id ?? result.attestation_id].filter(Boolean).join(', ');
  return `#${result.index}${what ? ` (${what})` : ''} ${result.status}${result.reason ? ` (${result.reason})` : ''}`;
}

/**
 * Prints the results (a table on a TTY, `status<TAB>index<TAB>…` lines piped, one JSON document
 * with `--json`) and throws {@link SignatureMismatchError} (exit 2) when any is not valid.
 * An offline input that holds no record is a {@link DataError} (65), not a pass: a verify step fed
 * by an export that matched nothing, or by an empty file, must not succeed having checked nothing
 * (`--remote` over a workspace or a period with no records passes, and says how many it checked).
 */
export async function reportVerification(
  deps: Factory,
  results: readonly VerifyResult[],
  how: { kind: 'evidence' | 'attestation'; json: boolean; remote?: boolean },
): Promise<void> {
  const noun = how.kind === 'evidence' ? 'record' : 'attestation';
  if (results.length === 0 && how.remote !== true) {
    throw new DataError(`the input holds no ${noun}: nothing was verified`, {
      hint: `give the file of ${noun}s to verify (one JSON object, an array or NDJSON), or --remote to verify the stored ones`,
    });
  }
  const out = deps.io.stdout;
  const failed = results.filter((result) => result.status !== 'valid');
  // A reader that stops early (`| head -1`) ends the listing, not the verdict.
  await printBeforeVerdict(async () => {
    if (how.json) {
      await printJson(out, {
        verified: results.length - failed.length,
        failed: failed.length,
        results,
      });
    } else {
      const columns: Column<VerifyResult>[] = [
        { header: 'status', value: (r) => r.status, style: statusStyle },
        { header: 'index', value: (r) => String(r.index) },
      ];
      if (how.kind === 'evidence') {
        columns.push({ header: 'type', value: (r) => r.record_type }, { header: 'system', value: (r) => r.system_name });
        if (how.remote) columns.push({ header: 'record id', value: (r) => r.record_id });
      } else {
        columns.push(
          { header: 'tool', value: (r) => r.tool_name },
          { header: 'system', value: (r) => r.system_name },
          { header: 'form', value: (r) => r.form },
        );
        if (how.remote) columns.push({ header: 'attestation id', value: (r) => r.attestation_id });
      }
      await printTable(out, columns, results, { now: deps.clock });
    }
  });
  if (failed.length > 0) {
    const named = failed.slice(0, 10).map(label).join('; ');
    const more = failed.length > 10 ? `; and ${failed.length - 10} more` : '';
    throw new SignatureMismatchError(`${failed.length} of ${plural(results.length, noun)} ${failed.length === 1 ? 'does' : 'do'} not verify: ${named}${more}`, {
      hint: 'a changed record no longer matches its signature; an unsigned one was never signed',
    });
  }
  if (deps.io.stderr.isTTY) await deps.note(results.length === 0 ? `no ${noun}s to verify` : `all ${plural(results.length, 'signature')} verify`);
}
