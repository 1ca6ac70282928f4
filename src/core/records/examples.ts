/**
 * Which of a record type's example values (`example` of each field and top input in the
 * catalogue) make its example record: the ones that must be given, plus any optional one that a
 * rule then requires (a `high` risk level needs its Annex III category). The CLI's help examples
 * and the MCP tools' examples are both built from this, so they show the same realistic record.
 */
import { buildRecord } from './build.js';
import type { FieldSpec, RecordTypeSpec, TopInputSpec } from './types.js';

/** The system every example record is about. */
export const EXAMPLE_SYSTEM = 'loan-scorer';

export interface ExampleSelection {
  fields: FieldSpec[];
  topInputs: TopInputSpec[];
}

/**
 * The fields and top inputs of a type's example record. A field with a default, a fixed value or
 * one derived from the others (human_oversight's `override`) is left out, as a person would.
 */
export function exampleSelection(spec: RecordTypeSpec): ExampleSelection {
  const fields = spec.fields.filter((field) => field.required && field.default === undefined && !field.fixed);
  const topInputs = spec.topInputs.filter((input) => input.required);
  const built = buildRecord(spec.type, exampleParts({ fields, topInputs }));
  if (!built.ok) {
    for (const issue of built.issues) {
      const field = spec.fields.find((candidate) => `payload.${candidate.wire}` === issue.path);
      if (field && !fields.includes(field)) fields.push(field);
      const input = spec.topInputs.find((candidate) => candidate.input === issue.path);
      if (input && !topInputs.includes(input)) topInputs.push(input);
    }
  }
  // In catalogue order, as help lists them.
  return { fields: spec.fields.filter((field) => fields.includes(field)), topInputs: spec.topInputs.filter((input) => topInputs.includes(input)) };
}

/** A selection's values as the parts of a record (payload by wire name, top inputs by input name). */
export function exampleParts(selection: ExampleSelection): { payload: Record<string, unknown>; top: Record<string, string>; systemName: string } {
  return {
    payload: Object.fromEntries(selection.fields.map((field) => [field.wire, field.example])),
    top: Object.fromEntries(selection.topInputs.map((input) => [input.input, input.example])),
    systemName: EXAMPLE_SYSTEM,
  };
}
