/**
 * The examples in `evidence add <type> --help` are built from the record-type catalogue's example
 * values (src/core/records/): every field has a realistic one, a record made of all of them
 * validates, and the example command line each help shows runs as printed (in-process, on the
 * local store, with --dry-run).
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { recordToolSchema } from '../../src/cli/mcp/schemas.js';
import { CATALOGUE, buildRecord, exampleSelection, type FieldSpec } from '../../src/core/index.js';
import { makeTempDir, runCli } from '../helpers/cli.js';

/** Whether an example value has the shape its field's kind says. */
function fitsKind(field: FieldSpec): boolean {
  const value = field.example;
  switch (field.kind) {
    case 'string':
    case 'date':
    case 'datetime':
      return typeof value === 'string' && value.trim() !== '';
    case 'number':
    case 'integer':
      return typeof value === 'number' && (field.kind === 'number' || Number.isInteger(value));
    case 'boolean':
      return typeof value === 'boolean';
    case 'string[]':
      return Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string');
    case 'number-map':
      return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((n) => typeof n === 'number');
  }
}

describe("the catalogue's example values", () => {
  it('gives every field of every record type an example of its kind, never its description', () => {
    const problems: string[] = [];
    for (const spec of CATALOGUE.values()) {
      for (const field of spec.fields) {
        if (!fitsKind(field)) problems.push(`${spec.type}.${field.wire}: ${JSON.stringify(field.example)} is not a ${field.kind}`);
        if (field.example === field.description) problems.push(`${spec.type}.${field.wire}: the example is the description`);
      }
      for (const input of spec.topInputs)
        if (typeof input.example !== 'string' || input.example === '') problems.push(`${spec.type} top input ${input.input}: no example`);
    }
    expect(problems).toEqual([]);
  });

  it('builds a valid record of every type from all its examples together', () => {
    for (const spec of CATALOGUE.values()) {
      const payload = Object.fromEntries(spec.fields.map((field) => [field.wire, field.example]));
      const top = Object.fromEntries(spec.topInputs.map((input) => [input.input, input.example]));
      const built = buildRecord(spec.type, { payload, top, systemName: 'loan-scorer' });
      expect({ type: spec.type, issues: built.ok ? [] : built.issues }).toEqual({ type: spec.type, issues: [] });
    }
  });
});

describe('evidence add <type> --help', () => {
  it('shows, for every record type, an example that runs as printed and stores a valid record (dry run)', async () => {
    const dataDir = makeTempDir('govctl-examples-');
    for (const spec of CATALOGUE.values()) {
      const help = (await runCli(['evidence', 'add', spec.type, '--help'])).stdout;
      const example = help
        .split('Examples:\n')[1]
        .split('\n')[0]
        .replace(/^\s*\$ govctl /, '');
      // No description used as a value, and no prohibited practice as the risk level.
      for (const field of spec.fields) expect(example).not.toContain(`"${field.description}"`);
      expect(example).not.toContain('unacceptable');
      // The words as a shell splits them (quotes, escapes), run in-process.
      const words = execFileSync('bash', ['-c', `printf '%s\\0' ${example}`], { encoding: 'utf8' })
        .split('\0')
        .slice(0, -1);
      const result = await runCli([...words, '--dry-run', '--json', '--base-url', 'local', '--data-dir', dataDir]);
      expect({
        type: spec.type,
        exitCode: result.exitCode,
        stdout: result.exitCode === 0 ? 'ok' : result.stdout,
        stderr: result.stderr.replace(/^govctl: using the local store.*\n/m, ''),
      }).toEqual({
        type: spec.type,
        exitCode: 0,
        stdout: 'ok',
        stderr: '',
      });
      expect(JSON.parse(result.stdout)).toMatchObject({ record_type: spec.type, detail: 'dry_run' });
    }
  });

  it('takes the risk level, the Annex III category its rule then needs, and repeats list flags per item', async () => {
    const help = (await runCli(['evidence', 'add', 'ai_risk_assessment', '--help'])).stdout;
    const example = help.split('Examples:\n')[1].split('\n')[0];
    expect(example).toContain('--risk-level high');
    expect(example).toContain('--annex-iii-category essential_services');
    expect(example).toContain('--impact-domain credit --impact-domain consumer_finance');
  });
});

describe('the MCP record tools', () => {
  it("show the catalogue's example record too: realistic values, never descriptions or the first enum value", () => {
    for (const spec of CATALOGUE.values()) {
      const example = (recordToolSchema(spec).schema as { examples: Record<string, unknown>[] }).examples[0];
      for (const field of exampleSelection(spec).fields) {
        // art5_self_assessment stays false in an agent's example: only a human certifies it.
        if (field.wire === 'art5_self_assessment') expect(example[field.wire]).toBe(false);
        else if (field.wire !== 'system')
          expect({ type: spec.type, field: field.wire, value: example[field.wire] }).toEqual({ type: spec.type, field: field.wire, value: field.example });
      }
      expect(JSON.stringify(example)).not.toContain('unacceptable');
    }
  });
});
