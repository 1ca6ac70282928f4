/**
 * Reading what a service answered, as a verifier must: every reply is untrusted input. A text is
 * read losslessly and strictly (core's parseJsonLossless with `strict`: no duplicate member, no
 * `__proto__` member, at any depth), an object must hold only the members the service writes, and
 * anything else is a named discrepancy, never a parse error of the verifier's own.
 */
import { isPlainObject, JsonSyntaxError, parseJsonLossless, type JsonValue } from '../../core/canonical-json.js';
import { LedgerCheckError } from '../errors.js';

/** A service's text inside a message: at most 100 characters of it (the rest elided). */
export function shown(text: string): string {
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}

/** The JSON a text holds, or why it is not JSON the service writes. */
export function readJson(text: string): { value: JsonValue } | { problem: string } {
  try {
    return { value: parseJsonLossless(text, { strict: true }) };
  } catch (error) {
    if (error instanceof JsonSyntaxError) return { problem: error.message };
    throw error;
  }
}

/** The members an object of one kind may have. */
export interface Shape {
  required: readonly string[];
  optional?: readonly string[];
}

/** Why an object does not have a shape (a missing or an unknown member), or undefined when it does. */
export function shapeProblem(value: Record<string, unknown>, shape: Shape): string | undefined {
  for (const member of shape.required) if (!Object.hasOwn(value, member)) return `no "${member}" member`;
  for (const member of Object.keys(value)) {
    if (!shape.required.includes(member) && !(shape.optional ?? []).includes(member)) return `an unknown member "${shown(member)}"`;
  }
  return undefined;
}

/**
 * A reply that must be one JSON object of a shape (a proof, the posture brief, the gates).
 * @throws LedgerCheckError naming `what` and what is wrong with it
 */
export function readReply(text: string, what: string, shape: Shape): Record<string, JsonValue> {
  const read = readJson(text);
  if ('problem' in read) throw new LedgerCheckError(`${what} is not JSON the service writes: ${read.problem}`);
  if (!isPlainObject(read.value)) throw new LedgerCheckError(`${what} is not a JSON object`);
  const problem = shapeProblem(read.value, shape);
  if (problem !== undefined) throw new LedgerCheckError(`${what} has ${problem}`);
  return read.value;
}

/** A whole number from 0 up to 2^53 − 1, or undefined. */
export function wholeNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}
