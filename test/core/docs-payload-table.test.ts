/**
 * docs/service.md's table of record payloads is the catalogue's (src/core/records): one source of
 * truth, so the documented wire table cannot drift from what the service validates.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { CATALOGUE, RECORD_TYPES } from '../../src/core/index.js';

/** The table rows as the catalogue says them. */
export function payloadTableRows(): string[] {
  return RECORD_TYPES.map((type) => {
    const { fields } = CATALOGUE.get(type)!;
    const required = fields.filter((field) => field.required).map((field) => `\`${field.wire}\``);
    const optional = fields
      .filter((field) => !field.required)
      .map((field) => `\`${field.wire}\`${field.default !== undefined ? ` (client default ${JSON.stringify(field.default)})` : ''}`);
    return `| \`${type}\` | ${required.join(', ')} | ${optional.join(', ') || '—'} |`;
  });
}

it('docs/service.md lists every record type with exactly the catalogue’s required and optional payload members', () => {
  const doc = readFileSync(new URL('../../docs/service.md', import.meta.url), 'utf8');
  const documented = doc.split('\n').filter((line) => RECORD_TYPES.some((type) => line.startsWith(`| \`${type}\` |`)));
  expect(documented.join('\n')).toBe(payloadTableRows().join('\n'));
});
