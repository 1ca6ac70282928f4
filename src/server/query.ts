/**
 * Query parameters, checked like body fields: a value of the wrong form is a 422
 * `validation_error` naming the parameter (docs/wire-format.md). A parameter given twice is an error too.
 * Unknown parameters are ignored.
 */
import { invalidField } from './errors.js';

export type Query = Record<string, unknown>;

/** A text parameter, or undefined when absent. */
export function textParam(query: Query, name: string, maxLength = 1024): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalidField(name, 'must be given once');
  if (value.length > maxLength) throw invalidField(name, `must be at most ${maxLength} characters`);
  return value;
}

/** An integer parameter within [min, max], written as plain decimal digits; `fallback` when absent. */
export function integerParam(query: Query, name: string, fallback: number, min: number, max: number): number {
  const text = textParam(query, name, 32);
  if (text === undefined) return fallback;
  const value = /^[0-9]{1,15}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) throw invalidField(name, `must be an integer from ${min} to ${max}`);
  return value;
}

/** A boolean parameter: `true`/`false` (also `1`/`0`); `false` when absent. */
export function booleanParam(query: Query, name: string): boolean {
  const text = textParam(query, name, 16);
  if (text === undefined) return false;
  switch (text.toLowerCase()) {
    case 'true':
    case '1':
      return true;
    case 'false':
    case '0':
      return false;
    default:
      throw invalidField(name, 'must be true or false');
  }
}
