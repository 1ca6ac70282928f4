/**
 * The Python-compatible canonical JSON form that `client_sig` and `witness_sig` sign (docs/wire-format.md),
 * and the lossless reader and printer that keep numbers exactly as the client wrote them.
 *
 * Python decides the bytes: the canonical string is `json.dumps(obj, sort_keys=True,
 * separators=(',', ':'))` with `ensure_ascii=True`. JavaScript differs from it in three places
 * that matter here, and this module exists to close them:
 * - `JSON.parse` turns `85.0` into `85` and `12345678901234567890` into a rounded double, so the
 *   reader keeps float lexemes as floats ({@link JsonFloat}) and big integers as `bigint`;
 * - JS sorts keys by UTF-16 code unit, Python by code point;
 * - JS prints `1e-7`, `1e+21` and `85`; Python's `repr(float)` prints `1e-07`, `1e+21` and `85.0`.
 *
 * Pure: no I/O. Safe for every layer to import.
 */

/** Deepest nesting read or written; Python's json recursion limit is about the same (~1000). */
const MAX_DEPTH = 1000;

/**
 * A value that cannot be written as canonical JSON: NaN, ±Infinity, `undefined` in an array or at
 * the top, a function, a symbol, a cycle, nesting deeper than 1000, or an object that is not a
 * plain object, an array, a `Date` or a {@link JsonFloat} (Map, Set, class instances, buffers).
 */
export class CanonicalJsonError extends Error {
  override readonly name = 'CanonicalJsonError';
}

/**
 * Marks a number that must be written as a float (a Python `float`), e.g. one read from the
 * lexeme `85.0` or `1e16`. The reader returns non-integral floats as plain numbers and wraps only
 * the integral ones (and -0.0), because only those would otherwise print as integers.
 *
 * @example canonicalize({ accuracy: new JsonFloat(85) }) // '{"accuracy":85.0}'
 * @throws CanonicalJsonError for NaN and ±Infinity, which JSON cannot express.
 */
export class JsonFloat {
  constructor(readonly value: number) {
    if (!Number.isFinite(value)) throw new CanonicalJsonError(`${value} is not a JSON number`);
  }

  /** So that a stray `JSON.stringify` writes the number rather than `{"value":…}`. */
  toJSON(): number {
    return this.value;
  }
}

/** What {@link parseJsonLossless} returns and {@link canonicalize} accepts without loss. */
export type JsonValue = null | boolean | number | bigint | string | JsonFloat | JsonValue[] | { [key: string]: JsonValue };

/**
 * Text that is not strict JSON. `position` is the 0-based character offset into the text that was
 * read; `line` and `column` are 1-based (for NDJSON, the line of the whole input).
 */
export class JsonSyntaxError extends Error {
  override readonly name = 'JsonSyntaxError';

  constructor(
    /** What went wrong, without the location, e.g. `Expecting ',' delimiter`. */
    readonly reason: string,
    readonly position: number,
    readonly line: number,
    readonly column: number,
  ) {
    // The same shape as Python's json.JSONDecodeError, so both sides' messages read alike.
    super(`${reason}: line ${line} column ${column} (char ${position})`);
  }
}

// ---------------------------------------------------------------------------------------------
// Numbers

/**
 * Python `repr(float)` of a finite number: the shortest digits that round-trip (the same digits
 * JavaScript chooses), in exponent form when the decimal exponent is below -4 or at least 16,
 * with a two-digit exponent and a `.0` on integral values in fixed form (docs/wire-format.md).
 *
 * @example pythonFloatRepr(85) // '85.0'
 * @example pythonFloatRepr(1e-5) // '1e-05'
 * @example pythonFloatRepr(1e16) // '1e+16'
 * @example pythonFloatRepr(-0) // '-0.0'
 * @throws CanonicalJsonError for NaN and ±Infinity.
 */
export function pythonFloatRepr(x: number): string {
  const abs = Math.abs(x);
  // Fast path: in [1e-4, 1e16) both languages print the same digits in fixed notation.
  if (abs >= 1e-4 && abs < 1e16) {
    const s = String(x);
    return Number.isInteger(x) ? s + '.0' : s;
  }
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  if (!Number.isFinite(x)) throw new CanonicalJsonError(`${x} is not a JSON number`);
  // Here the exponent is < -4 or >= 16, so Python uses exponent form; take JS's shortest digits.
  const [digits, exponent] = shortestDigits(abs);
  const mantissa = digits.length === 1 ? digits : digits[0] + '.' + digits.slice(1);
  const e = Math.abs(exponent);
  return (x < 0 ? '-' : '') + mantissa + (exponent < 0 ? 'e-' : 'e+') + (e < 10 ? '0' + e : e);
}

/** The shortest round-trip digits of a positive finite x (no leading/trailing zeros) and the decimal exponent of the first one. */
function shortestDigits(abs: number): [string, number] {
  // String(x) is specified to use the shortest round-trip digits, closest to x on a tie (ECMA-262
  // Number::toString); it is in fixed or exponent form depending on size, so normalise both.
  const s = String(abs);
  const ePos = s.indexOf('e');
  const mantissa = ePos < 0 ? s : s.slice(0, ePos);
  let exponent = ePos < 0 ? 0 : Number(s.slice(ePos + 1));
  const dot = mantissa.indexOf('.');
  const intPart = dot < 0 ? mantissa : mantissa.slice(0, dot);
  let digits = dot < 0 ? intPart : intPart + mantissa.slice(dot + 1);
  exponent += intPart.length - 1;
  let lead = 0;
  while (digits.charCodeAt(lead) === 0x30) lead++;
  exponent -= lead;
  digits = digits.slice(lead).replace(/0+$/, '');
  return [digits, exponent];
}

/** An integer as exact digits; beyond 1e21 String() switches to exponent form, so go through BigInt. */
function integerDigits(n: number): string {
  return Math.abs(n) < 1e21 ? String(n) : BigInt(n).toString(); // String(-0) is '0', as Python writes int 0
}

/** A plain JS number: integers as integers (a TypeScript number that is an integer is written as an integer), others as Python floats. */
function numberText(n: number): string {
  if (Number.isInteger(n)) return integerDigits(n);
  if (!Number.isFinite(n)) throw new CanonicalJsonError(`${n} is not a JSON number`);
  return pythonFloatRepr(n);
}

/** Whether `v` is a JSON number as this module represents one: a finite number, a bigint or a {@link JsonFloat}. */
export function isJsonNumber(v: unknown): v is number | bigint | JsonFloat {
  return (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'bigint' || v instanceof JsonFloat;
}

/** The numeric value of a JSON number; a bigint is converted with `Number()` and may round. */
export function jsonNumberValue(v: number | bigint | JsonFloat): number {
  return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : v.value;
}

// ---------------------------------------------------------------------------------------------
// Canonical writer

/** Strings made only of printable ASCII other than `"` and `\` need no escaping (the common case). */
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Python's escapes for U+0000..U+007F under ensure_ascii (docs/wire-format.md); null where none is needed. */
const SHORT_ESCAPES: Record<number, string> = { 0x22: '\\"', 0x5c: '\\\\', 0x0a: '\\n', 0x0d: '\\r', 0x09: '\\t', 0x08: '\\b', 0x0c: '\\f' };
const ASCII_ESCAPES: (string | null)[] = Array.from(
  { length: 0x80 },
  (_, c) => SHORT_ESCAPES[c] ?? (c < 0x20 || c === 0x7f ? '\\u' + c.toString(16).padStart(4, '0') : null),
);

/** A string as Python's ensure_ascii writes it: `\uXXXX` (lower-case) outside U+0020..U+007E. */
function quoteAscii(s: string): string {
  if (PLAIN_ASCII.test(s)) return '"' + s + '"';
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let escape: string | null;
    if (c < 0x80) {
      escape = ASCII_ESCAPES[c] ?? null;
      if (escape === null) continue;
    } else {
      // UTF-16 code units are exactly Python's output: astral characters become surrogate pairs
      // and a lone surrogate is written as its own escape.
      escape = (c < 0x100 ? '\\u00' : c < 0x1000 ? '\\u0' : '\\u') + c.toString(16);
    }
    if (i > start) out += s.slice(start, i);
    out += escape;
    start = i + 1;
  }
  return out + s.slice(start) + '"';
}

const SURROGATE = /[\ud800-\udfff]/;

/** Python's key order: by code point. Walks code points, so a surrogate pair counts as one character above U+FFFF. */
function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n;) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
  }
  return a.length - b.length;
}

/**
 * Containers nested deeper than MAX_DEPTH are refused; this is also how a cycle ends, without
 * tracking every container on the way down (the sign loop writes thousands of records a second).
 */
function checkDepth(depth: number): void {
  if (depth >= MAX_DEPTH) throw new CanonicalJsonError(`JSON nesting deeper than ${MAX_DEPTH} levels: is the value cyclic?`);
}

/** Anything that is not a plain object, array, Date or JsonFloat: named for the error message. */
function unsupported(value: unknown): CanonicalJsonError {
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') {
    return new CanonicalJsonError(`cannot write ${typeof value} as JSON`);
  }
  const name = (value as object).constructor?.name ?? 'object';
  return new CanonicalJsonError(`cannot write a ${name} as JSON: only plain objects, arrays, strings, numbers, bigints, booleans, null, Date and JsonFloat`);
}

/** Date is the one toJSON honoured (timestamps on the wire are ISO 8601 strings); an invalid Date is an error, not `null`. */
function dateText(date: Date): string {
  const time = date.getTime();
  if (Number.isNaN(time)) throw new CanonicalJsonError('cannot write an invalid Date as JSON');
  return date.toISOString();
}

function writeCanonical(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return quoteAscii(value);
    case 'number':
      return numberText(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) return writeCanonicalArray(value, depth);
      const proto = Object.getPrototypeOf(value);
      if (proto === Object.prototype || proto === null) return writeCanonicalObject(value as Record<string, unknown>, depth, null);
      if (value instanceof JsonFloat) return pythonFloatRepr(value.value);
      if (value instanceof Date) return quoteAscii(dateText(value));
      throw unsupported(value);
    }
    default:
      throw unsupported(value);
  }
}

function writeCanonicalArray(array: readonly unknown[], depth: number): string {
  checkDepth(depth);
  let out = '[';
  for (let i = 0; i < array.length; i++) {
    const item = array[i];
    // Python has no undefined; JSON.stringify would silently write null, which would sign a different value.
    if (item === undefined) throw new CanonicalJsonError(`cannot write undefined as JSON (array index ${i})`);
    if (i > 0) out += ',';
    out += writeCanonical(item, depth + 1);
  }
  return out + ']';
}

/**
 * Sorts in place by UTF-16 code unit. Records have a handful of keys per object, and for those an
 * insertion sort with `<` is about twice as fast as Array.prototype.sort (measured on Node 20).
 */
function sortCodeUnits(keys: string[]): string[] {
  if (keys.length > 24) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i];
    let j = i - 1;
    while (j >= 0 && keys[j] > key) {
      keys[j + 1] = keys[j];
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

/**
 * Members sorted by code point (docs/wire-format.md). Sorting by UTF-16 code unit (what `<` compares)
 * agrees with code point order unless a key holds a surrogate; only then (found while escaping the
 * keys, so plain keys cost nothing extra) the object is rewritten in code point order.
 */
function writeCanonicalObject(obj: Record<string, unknown>, depth: number, codePointSorted: string[] | null): string {
  checkDepth(depth);
  const keys = codePointSorted ?? sortCodeUnits(Object.keys(obj));
  let out = '{';
  let first = true;
  for (const key of keys) {
    const member = obj[key];
    if (member === undefined) continue; // as JSON.stringify: an absent optional member
    let quotedKey: string;
    if (PLAIN_ASCII.test(key)) {
      quotedKey = '"' + key + '"';
    } else {
      if (codePointSorted === null && SURROGATE.test(key)) {
        return writeCanonicalObject(obj, depth, keys.sort(compareCodePoints));
      }
      quotedKey = quoteAscii(key);
    }
    out += (first ? '' : ',') + quotedKey + ':' + writeCanonical(member, depth + 1);
    first = false;
  }
  return out + '}';
}

/** One member of an object as {@link canonicalize} writes it: its key, and `"key":value`. */
export interface CanonicalMember {
  key: string;
  text: string;
}

/**
 * The members of a plain object, each written once as {@link canonicalize} writes it, in canonical
 * (code point) order; members whose value is `undefined` are left out. `{` + their texts joined by
 * `,` + `}` is `canonicalize(obj)`: for callers that write several objects sharing members.
 * @throws CanonicalJsonError as {@link canonicalize}
 */
export function canonicalMembers(obj: Record<string, unknown>): CanonicalMember[] {
  const keys = Object.keys(obj);
  const members: CanonicalMember[] = [];
  for (const key of keys.some((k) => SURROGATE.test(k)) ? keys.sort(compareCodePoints) : sortCodeUnits(keys)) {
    const member = obj[key];
    if (member !== undefined) members.push({ key, text: `${PLAIN_ASCII.test(key) ? `"${key}"` : quoteAscii(key)}:${writeCanonical(member, 1)}` });
  }
  return members;
}

/** Python's key order (by code point), for callers that place a member among {@link canonicalMembers}. */
export function compareKeys(a: string, b: string): number {
  return compareCodePoints(a, b);
}

/**
 * The canonical string that signatures cover: byte-identical to Python's
 * `json.dumps(obj, sort_keys=True, separators=(',', ':'))` (docs/wire-format.md).
 *
 * - keys sorted by Unicode code point at every depth; members whose value is `undefined` skipped;
 * - strings escaped as Python's `ensure_ascii` does (`\"` `\\` `\n` `\r` `\t` `\b` `\f`, every other
 *   character outside U+0020..U+007E as lower-case `\uXXXX`; `/` is not escaped);
 * - integer numbers (including -0 and integers beyond 2^53) and bigints as exact digits; other
 *   numbers and {@link JsonFloat} as Python `repr(float)`, so `new JsonFloat(85)` is `85.0`;
 * - a `Date` as its ISO string; no other `toJSON` is called.
 *
 * @example canonicalize({ b: 1, a: [true, null, 'é'] }) // '{"a":[true,null,"\\u00e9"],"b":1}'
 * @throws CanonicalJsonError for NaN, ±Infinity, undefined (top level or in an array), functions,
 *   symbols, cycles, Map, Set and class instances.
 */
export function canonicalize(value: unknown): string {
  return writeCanonical(value, 0);
}

// ---------------------------------------------------------------------------------------------
// Lossless reader

// The text being read and the read position. Module state rather than a class keeps the hot loop
// free of property loads; reading is synchronous, so calls cannot interleave.
let src = '';
let pos = 0;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MAX_INTEGER_DIGITS = 4300; // Python's sys.int_info.default_max_str_digits

function fail(reason: string, at: number = pos): never {
  const text = src;
  src = '';
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) line++;
  throw new JsonSyntaxError(reason, at, line, at - lineStart + 1);
}

/** JSON whitespace is exactly space, tab, LF and CR (as Python's json). */
function skipWhitespace(): void {
  let c = src.charCodeAt(pos);
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = src.charCodeAt(++pos);
}

function parseValue(depth: number): JsonValue {
  const c = src.charCodeAt(pos);
  switch (c) {
    case 0x22: // "
      return parseString();
    case 0x7b: // {
      return parseObject(depth);
    case 0x5b: // [
      return parseArray(depth);
    case 0x74: // t
      return parseLiteral('true', true);
    case 0x66: // f
      return parseLiteral('false', false);
    case 0x6e: // n
      return parseLiteral('null', null);
    default:
      if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return parseNumber();
      return fail('Expecting value');
  }
}

function parseLiteral<T extends JsonValue>(word: string, value: T): T {
  if (!src.startsWith(word, pos)) fail('Expecting value');
  pos += word.length;
  return value;
}

function parseString(): string {
  const start = pos + 1;
  // Fast path: find the closing quote with indexOf and accept the slice if it holds no backslash
  // and no control character (strict JSON, like Python's json.loads with strict=True).
  const end = src.indexOf('"', start);
  if (end === -1) fail('Unterminated string starting at');
  for (let i = start; i < end; i++) {
    const c = src.charCodeAt(i);
    if (c === 0x5c || c < 0x20) return parseEscapedString(start);
  }
  pos = end + 1;
  return src.slice(start, end);
}

const HEX4 = /^[0-9a-fA-F]{4}$/;
const SHORT_UNESCAPES: Record<number, string> = { 0x22: '"', 0x5c: '\\', 0x2f: '/', 0x62: '\b', 0x66: '\f', 0x6e: '\n', 0x72: '\r', 0x74: '\t' };

function parseEscapedString(start: number): string {
  let out = '';
  let chunk = start;
  for (let i = start; i < src.length; i++) {
    const c = src.charCodeAt(i);
    if (c === 0x22) {
      pos = i + 1;
      return out + src.slice(chunk, i);
    }
    if (c < 0x20) fail('Invalid control character at', i);
    if (c !== 0x5c) continue;
    out += src.slice(chunk, i);
    const e = src.charCodeAt(i + 1);
    if (e === 0x75) {
      // \uXXXX: a lone surrogate stays a lone surrogate and a pair of escapes becomes one astral
      // character, which is what a JS string holding the two code units already means.
      const hex = src.slice(i + 2, i + 6);
      if (!HEX4.test(hex)) fail('Invalid \\uXXXX escape', i);
      out += String.fromCharCode(parseInt(hex, 16));
      i += 5;
    } else {
      const unescaped = SHORT_UNESCAPES[e];
      if (unescaped === undefined) fail('Invalid \\escape', i);
      out += unescaped;
      i += 1;
    }
    chunk = i + 1;
  }
  return fail('Unterminated string starting at', start - 1);
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/**
 * The lexeme decides the type (docs/wire-format.md): no fraction or exponent → integer (a number when it is
 * a safe integer, else a bigint with every digit); otherwise a float, wrapped in JsonFloat when its
 * value is integral or -0 so that it is written back as `85.0`, `1e+16` or `-0.0`.
 */
function parseNumber(): number | bigint | JsonFloat {
  const start = pos;
  let c = src.charCodeAt(pos);
  const negative = c === 0x2d;
  if (negative) c = src.charCodeAt(++pos);
  let value = 0;
  if (c === 0x30) {
    c = src.charCodeAt(++pos);
  } else if (c >= 0x31 && c <= 0x39) {
    do {
      value = value * 10 + (c - 0x30);
      c = src.charCodeAt(++pos);
    } while (isDigit(c));
  } else {
    fail('Expecting value', start);
  }
  const intDigits = pos - start - (negative ? 1 : 0);
  let isFloat = false;
  if (c === 0x2e) {
    c = src.charCodeAt(++pos);
    if (!isDigit(c)) fail('Expecting digit after decimal point');
    do c = src.charCodeAt(++pos);
    while (isDigit(c));
    isFloat = true;
  }
  if (c === 0x65 || c === 0x45) {
    c = src.charCodeAt(++pos);
    if (c === 0x2b || c === 0x2d) c = src.charCodeAt(++pos);
    if (!isDigit(c)) fail('Expecting digit in exponent');
    do c = src.charCodeAt(++pos);
    while (isDigit(c));
    isFloat = true;
  }
  if (!isFloat) {
    // Up to 15 digits the running value is exact; `-0` is the integer 0, as in Python.
    if (intDigits <= 15) return negative && value !== 0 ? -value : value;
    // Python refuses integers this long (int max_str_digits); so do we, as BigInt of a megabyte of
    // digits would cost the service a second of CPU.
    if (intDigits > MAX_INTEGER_DIGITS) fail(`Integer with more than ${MAX_INTEGER_DIGITS} digits`, start);
    const big = BigInt(src.slice(start, pos));
    return big <= MAX_SAFE && big >= -MAX_SAFE ? Number(big) : big;
  }
  // Number() rounds correctly, exactly as Python's float() does.
  const x = Number(src.slice(start, pos));
  if (!Number.isFinite(x)) fail('Number out of range', start);
  return Number.isInteger(x) ? new JsonFloat(x) : x;
}

function parseArray(depth: number): JsonValue[] {
  if (depth >= MAX_DEPTH) fail(`Nesting deeper than ${MAX_DEPTH}`);
  const array: JsonValue[] = [];
  pos++;
  skipWhitespace();
  if (src.charCodeAt(pos) === 0x5d) {
    pos++;
    return array;
  }
  for (;;) {
    array.push(parseValue(depth + 1));
    skipWhitespace();
    const c = src.charCodeAt(pos);
    if (c === 0x2c) {
      pos++;
      skipWhitespace();
    } else if (c === 0x5d) {
      pos++;
      return array;
    } else {
      fail("Expecting ',' delimiter");
    }
  }
}

function parseObject(depth: number): { [key: string]: JsonValue } {
  if (depth >= MAX_DEPTH) fail(`Nesting deeper than ${MAX_DEPTH}`);
  const obj: { [key: string]: JsonValue } = {};
  pos++;
  skipWhitespace();
  if (src.charCodeAt(pos) === 0x7d) {
    pos++;
    return obj;
  }
  for (;;) {
    if (src.charCodeAt(pos) !== 0x22) fail('Expecting property name enclosed in double quotes');
    const key = parseString();
    skipWhitespace();
    if (src.charCodeAt(pos) !== 0x3a) fail("Expecting ':' delimiter");
    pos++;
    skipWhitespace();
    const value = parseValue(depth + 1);
    if (key === '__proto__') {
      // An assignment would call the Object.prototype setter and replace the prototype.
      Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
    } else {
      obj[key] = value; // a duplicate key overwrites: the last one wins, as in Python
    }
    skipWhitespace();
    const c = src.charCodeAt(pos);
    if (c === 0x2c) {
      pos++;
      skipWhitespace();
    } else if (c === 0x7d) {
      pos++;
      return obj;
    } else {
      fail("Expecting ',' delimiter");
    }
  }
}

/**
 * Reads strict JSON without losing what the lexemes say (docs/wire-format.md): integers stay exact (a
 * number up to `Number.MAX_SAFE_INTEGER`, a bigint beyond), and a float lexeme whose value is
 * integral or -0 (`85.0`, `1e16`, `-0.0`) becomes a {@link JsonFloat}, so canonicalising the
 * result reproduces what Python would sign. Duplicate keys: the last wins. A `__proto__` key is
 * an ordinary own property. No comments, trailing commas, NaN or Infinity; a number that
 * overflows to Infinity (`1e400`) is an error.
 *
 * @example parseJsonLossless('{"a":85.0,"n":12345678901234567890}') // { a: JsonFloat(85), n: 12345678901234567890n }
 * @throws JsonSyntaxError with the position, line and column of the first problem.
 */
export function parseJsonLossless(text: string): JsonValue {
  src = text;
  pos = 0;
  skipWhitespace();
  const value = parseValue(0);
  skipWhitespace();
  if (pos < src.length) fail('Extra data');
  src = '';
  return value;
}

const BLANK_LINE = /^[ \t\r]*$/;

/**
 * Reads "records" input: a single JSON document (an array gives its elements, anything else is
 * one value) or NDJSON, one value per non-blank line. A leading byte order mark is ignored.
 * Errors carry the line number of the whole input.
 *
 * @example parseJsonDocuments('{"a":1}\n\n{"a":2}\n') // [{ a: 1 }, { a: 2 }]
 * @throws JsonSyntaxError
 */
export function parseJsonDocuments(text: string): JsonValue[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const offset = text.length - body.length;
  src = body;
  pos = 0;
  skipWhitespace();
  if (pos === src.length) return [];
  const firstStart = pos;
  try {
    const first = parseValue(0);
    const firstEnd = pos;
    skipWhitespace();
    if (pos === src.length) return Array.isArray(first) ? first : [first];
    // Something follows the first value. If that value spans lines, this is one (pretty-printed)
    // document with junk after it, not NDJSON: say so at the junk.
    const newline = body.indexOf('\n', firstStart);
    if (newline !== -1 && newline < firstEnd) fail('Extra data');
  } catch (error) {
    throw error instanceof JsonSyntaxError ? shifted(error, offset, 0) : error;
  } finally {
    src = '';
  }

  // More after the first value: NDJSON. Each line is its own document, so a broken line is
  // reported with its own line number however the lines around it look.
  const values: JsonValue[] = [];
  let lineStart = 0;
  for (let lineIndex = 0; lineStart <= body.length; lineIndex++) {
    const newline = body.indexOf('\n', lineStart);
    const lineEnd = newline === -1 ? body.length : newline;
    const line = body.slice(lineStart, lineEnd);
    if (!BLANK_LINE.test(line)) {
      try {
        values.push(parseJsonLossless(line));
      } catch (error) {
        throw error instanceof JsonSyntaxError ? shifted(error, offset + lineStart, lineIndex) : error;
      }
    }
    lineStart = lineEnd + 1;
  }
  return values;
}

/** The same error, placed in the whole input: `lines` lines and `chars` characters further on. */
function shifted(error: JsonSyntaxError, chars: number, lines: number): JsonSyntaxError {
  if (chars === 0 && lines === 0) return error;
  return new JsonSyntaxError(error.reason, error.position + chars, error.line + lines, error.column);
}

// ---------------------------------------------------------------------------------------------
// Lossless printer

function writeReadable(value: unknown, gap: string, indent: string, depth: number): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value); // keeps non-ASCII as-is, escapes controls and lone surrogates
    case 'object': {
      if (value === null) return 'null';
      const inner = indent + gap;
      const open = gap === '' ? '' : '\n' + inner;
      const separator = gap === '' ? ',' : ',\n' + inner;
      const close = gap === '' ? '' : '\n' + indent;
      if (Array.isArray(value)) {
        if (value.length === 0) return '[]';
        checkDepth(depth);
        let out = '[' + open;
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          if (item === undefined) throw new CanonicalJsonError(`cannot write undefined as JSON (array index ${i})`);
          out += (i > 0 ? separator : '') + writeReadable(item, gap, inner, depth + 1);
        }
        return out + close + ']';
      }
      const proto = Object.getPrototypeOf(value);
      if (proto === Object.prototype || proto === null) {
        checkDepth(depth);
        const colon = gap === '' ? ':' : ': ';
        let out = '';
        for (const key of Object.keys(value)) {
          const member: unknown = (value as Record<string, unknown>)[key];
          if (member === undefined) continue;
          out += (out === '' ? '' : separator) + JSON.stringify(key) + colon + writeReadable(member, gap, inner, depth + 1);
        }
        return out === '' ? '{}' : '{' + open + out + close + '}';
      }
      if (value instanceof JsonFloat) return pythonFloatRepr(value.value);
      if (value instanceof Date) return JSON.stringify(dateText(value));
      throw unsupported(value);
    }
    default:
      return writeCanonical(value, depth); // numbers, bigints and booleans print as in the canonical form
  }
}

/**
 * Prints JSON for people, like `JSON.stringify(value, null, indent)` (insertion order, optional
 * indent, non-ASCII kept as-is) but without loss: bigints as digits, {@link JsonFloat} and
 * non-integral numbers as Python floats (`85.0` stays `85.0`). Accepts what {@link canonicalize}
 * accepts and rejects what it rejects.
 *
 * @param indent spaces per level; 0 (the default) prints compactly.
 * @example stringifyJson(parseJsonLossless('{"b":85.0,"a":1}')) // '{"b":85.0,"a":1}'
 * @throws CanonicalJsonError as {@link canonicalize}.
 */
export function stringifyJson(value: unknown, indent = 0): string {
  return writeReadable(value, ' '.repeat(Math.max(0, Math.floor(indent))), '', 0);
}

/** A JSON object as parsed here: a plain object (not an array, a JsonFloat or a class instance). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof JsonFloat) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
