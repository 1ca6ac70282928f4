import { createHmac, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  canonicalize,
  CanonicalJsonError,
  isJsonNumber,
  JsonFloat,
  jsonNumberValue,
  JsonSyntaxError,
  parseJsonDocuments,
  parseJsonLossless,
  pythonFloatRepr,
  stringifyJson,
  type JsonValue,
} from '../../src/core/canonical-json.js';

// Written by test/vectors/generate.py (Python is the reference for docs/wire-format.md). The vector files are
// read with JSON.parse: every value the tests depend on is stored there as a string.
interface CanonicalCase {
  name: string;
  input: string;
  canonical: string;
  input_unescaped?: string;
}
interface HmacVector {
  name: string;
  key_hex: string;
  workspace_id: string;
  record_json: string;
  message: string;
  client_sig: string;
}
interface WitnessVector {
  name: string;
  form: 'canonical' | 'legacy';
  seed_hex: string;
  public_key_hex: string;
  workspace_id: string;
  attestation_json: string;
  message: string;
  signature_hex: string;
}
interface RfcVector {
  name: string;
  seed_hex: string;
  public_key_hex: string;
  message_hex: string;
  signature_hex: string;
}

function readVectors<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(`../vectors/${name}`, import.meta.url), 'utf8')) as T;
}
const canonicalVectors = readVectors<{ cases: CanonicalCase[]; floats: Record<string, string> }>('canonical.json');
const signatureVectors = readVectors<{ hmac_sha256: HmacVector[]; ed25519_witness: WitnessVector[]; ed25519_rfc8032: RfcVector[] }>('signatures.json');

function doubleFromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt('0x' + hex));
  return view.getFloat64(0);
}

function ed25519PrivateKey(seedHex: string) {
  // PKCS#8 wrapping of a raw 32-byte Ed25519 seed (RFC 8410).
  return createPrivateKey({ key: Buffer.from('302e020100300506032b657004220420' + seedHex, 'hex'), format: 'der', type: 'pkcs8' });
}

function ed25519PublicKey(publicHex: string) {
  return createPublicKey({ key: Buffer.from('302a300506032b6570032100' + publicHex, 'hex'), format: 'der', type: 'spki' });
}

function asObject(value: JsonValue): { [key: string]: JsonValue } {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof JsonFloat) throw new Error('expected an object');
  return value;
}

function syntaxErrorOf(read: () => unknown): JsonSyntaxError {
  try {
    read();
  } catch (error) {
    if (error instanceof JsonSyntaxError) return error;
    throw error;
  }
  throw new Error('expected a JsonSyntaxError');
}

describe('Python reference vectors (test/vectors/canonical.json)', () => {
  it.each(canonicalVectors.cases)('canonicalises "$name" byte for byte like Python', (vector) => {
    expect(canonicalize(parseJsonLossless(vector.input))).toBe(vector.canonical);
    if (vector.input_unescaped !== undefined) {
      expect(canonicalize(parseJsonLossless(vector.input_unescaped))).toBe(vector.canonical);
    }
    // The canonical form is a fixed point: reading it back and writing it again changes nothing.
    expect(canonicalize(parseJsonLossless(vector.canonical))).toBe(vector.canonical);
  });

  it('writes every reference double exactly as Python repr(float) does', () => {
    const floats = Object.entries(canonicalVectors.floats);
    expect(floats.length).toBeGreaterThan(5000);
    const mismatches = floats.filter(([bits, repr]) => pythonFloatRepr(doubleFromBits(bits)) !== repr);
    expect(mismatches).toEqual([]);
  });

  it('reads every reference float lexeme back to the same double and the same text', () => {
    const mismatches = Object.entries(canonicalVectors.floats).filter(([bits, repr]) => {
      const value = parseJsonLossless(repr);
      return canonicalize(value) !== repr || !Object.is(jsonNumberValue(value as number | JsonFloat), doubleFromBits(bits));
    });
    expect(mismatches).toEqual([]);
  });
});

describe('signature vectors (test/vectors/signatures.json)', () => {
  it.each(signatureVectors.hmac_sha256)('builds the client_sig message and digest of "$name"', (vector) => {
    const record = asObject(parseJsonLossless(vector.record_json));
    const message = canonicalize({
      occurred_at: record['occurred_at'],
      payload: record['payload'],
      record_type: record['record_type'],
      system_name: record['system_name'],
      workspace_id: vector.workspace_id,
    });
    expect(message).toBe(vector.message);
    expect(createHmac('sha256', Buffer.from(vector.key_hex, 'hex')).update(message, 'utf8').digest('hex')).toBe(vector.client_sig);
  });

  it.each(signatureVectors.ed25519_witness)('builds the witness_sig message of "$name" and the signature verifies', (vector) => {
    const attestation = asObject(parseJsonLossless(vector.attestation_json));
    const { witness_sig, verifying_key_hex, ...signed } = attestation;
    expect(witness_sig).toBe(vector.signature_hex);
    expect(verifying_key_hex).toBe(vector.public_key_hex);
    const message =
      vector.form === 'canonical'
        ? canonicalize({ ...signed, workspace_id: vector.workspace_id })
        : `${String(signed['input_hash'])}:${String(signed['output_hash'])}:${String(signed['executed_at'])}`;
    expect(message).toBe(vector.message);
    const bytes = Buffer.from(message, 'utf8');
    expect(sign(null, bytes, ed25519PrivateKey(vector.seed_hex)).toString('hex')).toBe(vector.signature_hex);
    expect(verify(null, bytes, ed25519PublicKey(vector.public_key_hex), Buffer.from(vector.signature_hex, 'hex'))).toBe(true);
  });

  it('holds RFC 8032 tests 1, 2, 3 and 1024, reproduced by node:crypto', () => {
    const names = signatureVectors.ed25519_rfc8032.map((v) => v.name);
    expect(names).toEqual(['RFC 8032 7.1 TEST 1', 'RFC 8032 7.1 TEST 2', 'RFC 8032 7.1 TEST 3', 'RFC 8032 7.1 TEST 1024']);
    for (const vector of signatureVectors.ed25519_rfc8032) {
      const key = ed25519PrivateKey(vector.seed_hex);
      const publicDer = createPublicKey(key).export({ format: 'der', type: 'spki' });
      expect(publicDer.subarray(-32).toString('hex')).toBe(vector.public_key_hex);
      expect(sign(null, Buffer.from(vector.message_hex, 'hex'), key).toString('hex')).toBe(vector.signature_hex);
    }
    expect(Buffer.from(signatureVectors.ed25519_rfc8032[3].message_hex, 'hex')).toHaveLength(1023);
  });
});

describe('parseJsonLossless', () => {
  it('keeps 85.0 a float through parse and canonicalize', () => {
    const value = asObject(parseJsonLossless('{"accuracy": 85.0, "n": 85}'));
    expect(value['accuracy']).toEqual(new JsonFloat(85));
    expect(value['n']).toBe(85);
    expect(canonicalize(value)).toBe('{"accuracy":85.0,"n":85}');
  });

  it('wraps integral and negative-zero floats in JsonFloat and returns other floats as numbers', () => {
    expect(parseJsonLossless('[1e16, 1E22, -0.0, 0e0, 2.5, 1e-7]')).toEqual([
      new JsonFloat(1e16),
      new JsonFloat(1e22),
      new JsonFloat(-0),
      new JsonFloat(0),
      2.5,
      1e-7,
    ]);
    expect(Object.is((parseJsonLossless('-0.0') as JsonFloat).value, -0)).toBe(true);
    expect(canonicalize(parseJsonLossless('[1e16, 1E22, -0.0, 1.0e-400]'))).toBe('[1e+16,1e+22,-0.0,0.0]');
  });

  it('keeps integers beyond 2^53 exact as bigint and safe ones as numbers', () => {
    expect(parseJsonLossless('[9007199254740991, -9007199254740991, 9007199254740992, 12345678901234567890, -9223372036854775808]')).toEqual([
      9007199254740991,
      -9007199254740991,
      9007199254740992n,
      12345678901234567890n,
      -9223372036854775808n,
    ]);
    expect(parseJsonLossless('[123456789012345, 1234567890123456]')).toEqual([123456789012345, 1234567890123456]);
    expect(canonicalize(parseJsonLossless('{"count": 9007199254740993}'))).toBe('{"count":9007199254740993}');
  });

  it('reads the integer -0 as 0, as Python does', () => {
    expect(Object.is(parseJsonLossless('-0'), 0)).toBe(true);
    expect(canonicalize(parseJsonLossless('[-0]'))).toBe('[0]');
  });

  it('rejects a number that overflows to infinity (1e400)', () => {
    const error = syntaxErrorOf(() => parseJsonLossless('{"x": 1e400}'));
    expect(error.reason).toBe('Number out of range');
    expect(error.position).toBe(6);
    expect(() => parseJsonLossless('-1.5e999')).toThrow(JsonSyntaxError);
  });

  it('refuses integers longer than Python reads (4300 digits)', () => {
    expect(parseJsonLossless('9'.repeat(4300))).toBe(BigInt('9'.repeat(4300)));
    expect(syntaxErrorOf(() => parseJsonLossless('[-' + '9'.repeat(4301) + ']')).position).toBe(1);
  });

  it('rejects NaN and Infinity literals', () => {
    for (const text of ['NaN', 'Infinity', '-Infinity', '[1, NaN]']) {
      expect(() => parseJsonLossless(text), text).toThrow(JsonSyntaxError);
    }
  });

  it('reports the position, line and column of a syntax error', () => {
    const error = syntaxErrorOf(() => parseJsonLossless('{\n  "a": 1\n  "b": 2\n}'));
    expect(error.reason).toBe("Expecting ',' delimiter");
    expect([error.position, error.line, error.column]).toEqual([13, 3, 3]);
    expect(error.message).toBe("Expecting ',' delimiter: line 3 column 3 (char 13)");

    const trailing = syntaxErrorOf(() => parseJsonLossless('{"a":1,}'));
    expect(trailing.reason).toBe('Expecting property name enclosed in double quotes');
    expect([trailing.position, trailing.line, trailing.column]).toEqual([7, 1, 8]);
  });

  it.each([
    ['an empty text', '', 'Expecting value', 0],
    ['a trailing comma in an array', '[1,]', 'Expecting value', 3],
    ['a comment', '{"a":1 /* no */}', "Expecting ',' delimiter", 7],
    ['single quotes', "{'a':1}", 'Expecting property name enclosed in double quotes', 1],
    ['a raw control character in a string', '"a\tb"', 'Invalid control character at', 2],
    ['an unknown escape', '"\\x41"', 'Invalid \\escape', 1],
    ['a short \\u escape', '"\\u12"', 'Invalid \\uXXXX escape', 1],
    ['an unterminated string', '"abc', 'Unterminated string starting at', 0],
    ['an unterminated escaped string', '"a\\"', 'Unterminated string starting at', 0],
    ['a leading zero', '01', 'Extra data', 1],
    ['a leading plus', '+1', 'Expecting value', 0],
    ['a bare fraction', '.5', 'Expecting value', 0],
    ['a missing fraction digit', '1.', 'Expecting digit after decimal point', 2],
    ['a missing exponent digit', '1e+', 'Expecting digit in exponent', 3],
    ['a lone minus', '-', 'Expecting value', 0],
    ['a second document', '{} {}', 'Extra data', 3],
    ['a byte order mark', '\ufeff{}', 'Expecting value', 0],
    ['a truncated literal', 'tru', 'Expecting value', 0],
    ['an unclosed array', '[1, 2', "Expecting ',' delimiter", 5],
  ])('rejects %s', (_, text, reason, position) => {
    const error = syntaxErrorOf(() => parseJsonLossless(text));
    expect(error.reason).toBe(reason);
    expect(error.position).toBe(position);
  });

  it('makes a "__proto__" key an own property and never touches the prototype', () => {
    const value = asObject(parseJsonLossless('{"__proto__": {"polluted": true}, "a": {"__proto__": [1]}}'));
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect(Object.keys(value)).toEqual(['__proto__', 'a']);
    expect((value as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(asObject(value['a']))).toBe(Object.prototype);
    expect(canonicalize(value)).toBe('{"__proto__":{"polluted":true},"a":{"__proto__":[1]}}');
  });

  it('keeps the last of duplicate keys, as Python does', () => {
    expect(parseJsonLossless('{"a": 1, "b": 2, "a": 3}')).toEqual({ a: 3, b: 2 });
    expect(canonicalize(parseJsonLossless('{"__proto__": 1, "__proto__": 2}'))).toBe('{"__proto__":2}');
  });

  it('decodes escapes, combining surrogate escapes and keeping lone ones', () => {
    expect(parseJsonLossless('"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\\ud800x"')).toBe('"\\/\b\f\n\r\t\u00e9\u{1f600}\ud800x');
  });

  it('accepts nesting 1000 deep and refuses deeper', () => {
    expect(() => parseJsonLossless('['.repeat(1000) + ']'.repeat(1000))).not.toThrow();
    expect(syntaxErrorOf(() => parseJsonLossless('['.repeat(1001) + ']'.repeat(1001))).reason).toBe('Nesting deeper than 1000');
  });
});

describe('parseJsonDocuments', () => {
  it('reads one object as a list of one record', () => {
    expect(parseJsonDocuments('{"a": 85.0}\n')).toEqual([{ a: new JsonFloat(85) }]);
  });

  it('reads a JSON array as its elements', () => {
    expect(parseJsonDocuments('[\n  {"a": 1},\n  {"a": 2}\n]')).toEqual([{ a: 1 }, { a: 2 }]);
  });

  it('reads NDJSON, skipping blank lines and CRLF line ends', () => {
    expect(parseJsonDocuments('{"a":1}\r\n\r\n  \n{"a":12345678901234567890}\n[1]\n')).toEqual([{ a: 1 }, { a: 12345678901234567890n }, [1]]);
  });

  it('reads an empty or blank input as no records and ignores a byte order mark', () => {
    expect(parseJsonDocuments('')).toEqual([]);
    expect(parseJsonDocuments(' \n\t\n')).toEqual([]);
    expect(parseJsonDocuments('\ufeff{"a":1}\n{"a":2}')).toEqual([{ a: 1 }, { a: 2 }]);
  });

  it('reports the line number of a bad NDJSON line', () => {
    const error = syntaxErrorOf(() => parseJsonDocuments('{"a":1}\n\n{"a":2,}\n{"a":3}\n'));
    expect(error.reason).toBe('Expecting property name enclosed in double quotes');
    expect([error.line, error.column, error.position]).toEqual([3, 8, 16]);
    expect(error.message).toContain('line 3 column 8');
  });

  it('reports junk after a pretty-printed document where the junk is', () => {
    const error = syntaxErrorOf(() => parseJsonDocuments('{\n  "a": 1\n}\nnot json'));
    expect(error.reason).toBe('Extra data');
    expect([error.line, error.column]).toEqual([4, 1]);
  });

  it('reports an error inside a pretty-printed document on its own line', () => {
    const error = syntaxErrorOf(() => parseJsonDocuments('[\n  {"a": 1},\n  {"a": tru}\n]'));
    expect([error.reason, error.line, error.column]).toEqual(['Expecting value', 3, 9]);
  });
});

describe('canonicalize', () => {
  it('sorts keys by code point, so an astral key comes after U+E000..U+FFFF keys', () => {
    expect(canonicalize({ '\u{1f600}': 1, '\ue000': 2, '\uffff': 3, b: 4, a: { '\u{10000}': 5, '\ufb01': 6 } })).toBe(
      '{"a":{"\\ufb01":6,"\\ud800\\udc00":5},"b":4,"\\ue000":2,"\\uffff":3,"\\ud83d\\ude00":1}',
    );
  });

  it('escapes exactly what Python escapes', () => {
    expect(canonicalize('"\\/\b\f\n\r\t\u0000\u001f\u007f\u0080é\u2028\u2029\ud800\u{1f600}~')).toBe(
      '"\\"\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f\\u007f\\u0080\\u00e9\\u2028\\u2029\\ud800\\ud83d\\ude00~"',
    );
  });

  it('writes JS integers as integers, including -0 and values beyond 2^53', () => {
    // The last value is Python's int(-1.5e300): the exact integer the double holds.
    expect(canonicalize([0, -0, 85, -7, 2 ** 53 + 2, 1e21, 1e22, -1.5e300])).toBe(
      '[0,0,85,-7,9007199254740994,1000000000000000000000,10000000000000000000000,-1500000000000000078757140382806630373056702871662238732373781173267703686983362293679557062620671796065556665749325817265413784853040645863467188277180060474272580801389863705606745350692182135089053429852456199917621678558451461320111979114170213741868888183230085264257173504208294580298189100810240]',
    );
  });

  it('writes non-integral numbers, JsonFloat and bigint the Python way', () => {
    expect(canonicalize({ a: 0.1, b: new JsonFloat(85), c: 1e-7, d: new JsonFloat(1e16), e: 12345678901234567890n, f: new JsonFloat(-0) })).toBe(
      '{"a":0.1,"b":85.0,"c":1e-07,"d":1e+16,"e":12345678901234567890,"f":-0.0}',
    );
  });

  it('skips undefined members and writes booleans, null and empty containers', () => {
    expect(canonicalize({ u: undefined, t: true, f: false, n: null, a: [], o: {} })).toBe('{"a":[],"f":false,"n":null,"o":{},"t":true}');
  });

  it('writes a Date as its ISO string and calls no other toJSON', () => {
    expect(canonicalize({ at: new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 6)) })).toBe('{"at":"2025-01-02T03:04:05.006Z"}');
    expect(() => canonicalize(new Date(Number.NaN))).toThrow(CanonicalJsonError);
    expect(() => canonicalize({ toJSON: () => 'x' })).toThrow(CanonicalJsonError);
  });

  it('accepts null-prototype objects', () => {
    const value = Object.assign(Object.create(null) as Record<string, unknown>, { b: 1, a: 2 });
    expect(canonicalize(value)).toBe('{"a":2,"b":1}');
  });

  it.each([
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity in an object', { x: Number.NEGATIVE_INFINITY }],
    ['undefined at the top', undefined],
    ['undefined in an array', [1, undefined]],
    ['a hole in an array', [1, , 3]],
    ['a function', { f: () => 1 }],
    ['a symbol', [Symbol('s')]],
    ['a Map', new Map([['a', 1]])],
    ['a Set', new Set([1])],
    [
      'a class instance',
      new (class Point {
        x = 1;
      })(),
    ],
    ['a boxed string', Object('s') as unknown],
    ['a Buffer', Buffer.from('x')],
  ])('rejects %s', (_, value) => {
    expect(() => canonicalize(value)).toThrow(CanonicalJsonError);
  });

  it('rejects cyclic objects and arrays', () => {
    const obj: Record<string, unknown> = { a: 1 };
    obj['self'] = { back: obj };
    const array: unknown[] = [];
    array.push(array);
    expect(() => canonicalize(obj)).toThrow(/cyclic/);
    expect(() => canonicalize(array)).toThrow(CanonicalJsonError);
  });

  it('refuses a JsonFloat that is not finite', () => {
    expect(() => new JsonFloat(Number.NaN)).toThrow(CanonicalJsonError);
    expect(() => new JsonFloat(Number.POSITIVE_INFINITY)).toThrow(CanonicalJsonError);
  });
});

describe('pythonFloatRepr', () => {
  it.each([
    [1e-5, '1e-05'],
    [1.5e-7, '1.5e-07'],
    [1e16, '1e+16'],
    [1.234e20, '1.234e+20'],
    [85, '85.0'],
    [-0, '-0.0'],
    [0, '0.0'],
    [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [0.1, '0.1'],
    [1 / 3, '0.3333333333333333'],
    [123456789.123, '123456789.123'],
    [1e15, '1000000000000000.0'],
    [9007199254740993, '9007199254740992.0'],
    [0.0001, '0.0001'],
    [-2.5e-100, '-2.5e-100'],
  ])('writes %s as %s', (x, repr) => {
    expect(pythonFloatRepr(x)).toBe(repr);
  });

  it('rejects NaN and infinities', () => {
    expect(() => pythonFloatRepr(Number.NaN)).toThrow(CanonicalJsonError);
    expect(() => pythonFloatRepr(Number.NEGATIVE_INFINITY)).toThrow(CanonicalJsonError);
  });
});

describe('stringifyJson', () => {
  it('round-trips records keeping 85.0, big integers and key order', () => {
    const text = '{"z":85.0,"a":[12345678901234567890,-0.0,1e-05,0.5,1e+16],"m":{"é":"日本 😀"}}';
    expect(stringifyJson(parseJsonLossless(text))).toBe(text);
  });

  it('indents like JSON.stringify', () => {
    const value = { b: [1, 'x', { c: null }, []], a: {}, s: 'line\nbreak\u2028é' };
    expect(stringifyJson(value, 2)).toBe(JSON.stringify(value, null, 2));
    expect(stringifyJson(value)).toBe(JSON.stringify(value));
    expect(stringifyJson(parseJsonLossless('{"f": 85.0}'), 2)).toBe('{\n  "f": 85.0\n}');
  });

  it('rejects what canonicalize rejects', () => {
    expect(() => stringifyJson({ x: Number.NaN })).toThrow(CanonicalJsonError);
    expect(() => stringifyJson([undefined])).toThrow(CanonicalJsonError);
    expect(() => stringifyJson(new Map())).toThrow(CanonicalJsonError);
  });
});

describe('isJsonNumber and jsonNumberValue', () => {
  it('recognise finite numbers, bigints and JsonFloat and give their numeric value', () => {
    expect([1.5, 2n, new JsonFloat(3), Number.NaN, '4', null].map(isJsonNumber)).toEqual([true, true, true, false, false, false]);
    expect([jsonNumberValue(1.5), jsonNumberValue(12345678901234567890n), jsonNumberValue(new JsonFloat(85))]).toEqual([1.5, 12345678901234567000, 85]);
  });
});
