/**
 * Fuzz: at least 5 000 malformed or hostile requests to every endpoint of a real server on
 * 127.0.0.1, from a seeded PRNG (GOVCTL_FUZZ_SEED to replay a run). Never a 5xx; every error
 * body exactly `{ error, message, field? }` with a known code; the server answers afterwards.
 * On PostgreSQL (the server-postgres project) the first 2 500 requests of the same sequence: the
 * HTTP layer, parsing and validation in front of the store are the ones SQLite's 5 000 already
 * cover. Every endpoint, every kind of damage and every status the test requires occur well within
 * either count, which the test asserts on both backends (the counts are the smallest that cover every
 * claim: docs/decisions.md, "Real tests that run fast on two cores").
 */
import { connect } from 'node:net';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECORD_TYPES } from '../../src/core/index.js';
import { ERROR_CODES } from '../../src/server/index.js';
import { BODY_LIMIT } from '../../src/server/json-body.js';
import { provisionWorkspace, startTestServer, type TestServer } from '../helpers/server.js';
import { attestation, call, evidenceRecord, PAYLOADS, wsPath } from '../helpers/service-requests.js';
import { prng } from '../helpers/prng.js';
import { testBackend } from '../helpers/backend.js';

const SEED = Number(process.env.GOVCTL_FUZZ_SEED ?? 20260601);
const MIN_REQUESTS = testBackend() === 'postgres' ? 1_000 : 5_000;
const TIME_BUDGET_MS = 60_000;
const CONCURRENCY = 16;

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** send over a raw socket (paths and bytes an HTTP client would refuse or normalise) */
  raw?: boolean;
  /** a body over the limit: the server may answer 413 and close before the upload ends */
  oversized?: boolean;
  label: string;
  /** the endpoint it was generated for, and the kinds of damage done to it */
  endpoint: string;
  forms: string[];
}

const ENDPOINTS: { method: string; rest: string | null; body?: string }[] = [
  { method: 'GET', rest: null },
  { method: 'POST', rest: 'grc/evidence', body: 'evidence' },
  { method: 'GET', rest: 'grc/evidence' },
  { method: 'GET', rest: 'grc/evidence/{id}' },
  { method: 'POST', rest: 'attestations/external', body: 'attestation' },
  { method: 'POST', rest: 'attestations/batch', body: 'batch' },
  { method: 'GET', rest: 'grc/posture-brief' },
  { method: 'GET', rest: 'grc/systems' },
  { method: 'GET', rest: 'grc/gates/check' },
  { method: 'POST', rest: 'grc/derive-controls', body: 'derive' },
];
const endpointName = (endpoint: (typeof ENDPOINTS)[number]) => `${endpoint.method} ${endpoint.rest ?? 'me'}`;
const FORMS = ['mutated', 'not-json', 'deep', 'content-type', 'binary', 'oversized', 'random-json', 'shaped', 'raw-headers'] as const;

let server: TestServer;
let otherWorkspace: string;
beforeAll(async () => {
  server = await startTestServer({ rateLimitPerMinute: 10_000_000 });
  otherWorkspace = (await provisionWorkspace(server.dbPath)).workspaceId;
});
afterAll(async () => {
  await server.stop();
});

function generator(random: () => number) {
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)];
  const chance = (p: number) => random() < p;

  const strings = [
    '',
    ' ',
    'x',
    'ünïcödé ✓',
    '😀',
    '\u0000',
    '\ud800',
    '\u2028\u2029',
    '<script>alert(1)</script>',
    "'; DROP TABLE evidence; --",
    '../../etc/passwd',
    '%00',
    '\\',
    '"',
    'null',
    'true',
    '1e400',
    'x'.repeat(300),
    'y'.repeat(70_000),
    'rec_00000000-0000-0000-0000-000000000000',
    '2026-02-30T25:61:00Z',
    '9999-12-31T23:59:59Z',
    '0000-01-01T00:00:00Z',
    '2026-01-01',
    'hmac-sha256',
    'a'.repeat(64),
    'A'.repeat(128),
  ];
  const numberLexemes = [
    '0',
    '-0',
    '-0.0',
    '1e400',
    '-1e400',
    '1e-400',
    '12345678901234567890',
    '85.0',
    '1.5',
    '-1',
    '1E+2',
    '0.1e-7',
    '99999999999999999999999999999999',
  ];

  function randomJson(depth: number): string {
    switch (depth > 4 ? int(5) : int(8)) {
      case 0:
        return pick(numberLexemes);
      case 1:
        return JSON.stringify(pick(strings));
      case 2:
        return pick(['true', 'false', 'null']);
      case 3:
        return String(random() * 1e6 - 5e5);
      case 4:
        return JSON.stringify(pick(RECORD_TYPES));
      case 5:
        return `[${Array.from({ length: int(4) }, () => randomJson(depth + 1)).join(',')}]`;
      default:
        return `{${Array.from({ length: int(5) }, () => `${JSON.stringify(pick([...strings.slice(0, 12), 'payload', 'record_type', 'system_name', 'records', 'risk_level', '__proto__', 'constructor']))}:${randomJson(depth + 1)}`).join(',')}}`;
    }
  }

  /** A valid body for the endpoint, then damaged. */
  function mutatedBody(kind: string): string {
    let value: Record<string, unknown>;
    if (kind === 'evidence') value = evidenceRecord(pick(RECORD_TYPES));
    else if (kind === 'attestation') value = attestation();
    else if (kind === 'batch') value = { records: Array.from({ length: 1 + int(4) }, () => attestation()) };
    else value = { description: 'a chatbot for loans', risk_tier: pick(['high', 'limited', 'minimal', 'unacceptable']) };
    const text = JSON.stringify(value);
    switch (int(9)) {
      case 0: {
        // drop a member
        const keys = Object.keys(value);
        delete value[pick(keys)];
        return JSON.stringify(value);
      }
      case 1: {
        // a member of the wrong type or a hostile value
        value[pick(Object.keys(value))] = JSON.parse(pick(['null', '[]', '{}', '42', '"x"', 'true', '[[[[1]]]]']));
        return JSON.stringify(value);
      }
      case 2:
        value[pick(['surprise', '__proto__', 'constructor', 'workspace_id', 'record_id'])] = JSON.parse(randomJson(2));
        return JSON.stringify(value);
      case 3: {
        // a payload field replaced by a hostile number lexeme, written into the text
        if (kind === 'evidence') {
          const type = (value as { record_type: keyof typeof PAYLOADS }).record_type;
          const field = pick(Object.keys(PAYLOADS[type]));
          return text.replace(new RegExp(`"${field}":("[^"]*"|[^,}\\]]+|\\[[^\\]]*\\])`), `"${field}":${pick(numberLexemes)}`);
        }
        return text.replace(/"schema_version":2/, `"schema_version":${pick(numberLexemes)}`);
      }
      case 4:
        // truncated
        return text.slice(0, int(text.length));
      case 5:
        // a huge string member
        value[pick(['system_name', 'identity', 'tool_name', 'description', 'notes'])] = 'z'.repeat(1000 + int(200_000));
        return JSON.stringify(value);
      case 6:
        return text.replace(/:/, pick([': NaN,"a":', ':Infinity,"b":', ': undefined,"c":', ':\'x\',"d":', ':/*c*/1,"e":']));
      case 7:
        return randomJson(0);
      default:
        // deep nesting somewhere inside
        return text.replace(/\{/, `{"deep":${'['.repeat(1000 + int(10_000))}`);
    }
  }

  function workspaceSegment(): { text: string; raw: boolean } {
    if (chance(0.75)) return { text: server.workspaceId, raw: false };
    const options: [string, boolean][] = [
      [otherWorkspace, false],
      ['ws_00000000-0000-0000-0000-000000000000', false],
      ['..%2f..%2f', false],
      ['..%2F..%2F..%2Fapi%2Fme', false],
      ['%00', false],
      [`${server.workspaceId}%00`, false],
      ['%E2%9C%93', false],
      ['%zz', false],
      ['%', false],
      ['w'.repeat(150), false],
      [encodeURIComponent('ws_ünïcödé'), false],
      ['..', true],
      ['.', true],
      [`${server.workspaceId}/..`, true],
      ['ws_\u00e9', true],
      ['ws id', true],
    ];
    const [text, raw] = pick(options);
    return { text, raw };
  }

  function query(rest: string | null): string {
    if (!chance(0.5)) return '';
    const names = ['limit', 'days', 'cursor', 'dry_run', 'system_name', 'record_type', 'name', 'unknown', 'limit'];
    const values = [
      '1',
      '200',
      '201',
      '0',
      '-5',
      '1.5',
      '1e3',
      '',
      'true',
      'false',
      'maybe',
      '%00',
      '%zz',
      'x'.repeat(2000),
      'eyJ4IjoxfQ',
      'W1swLCJ4Il1d',
      encodeURIComponent('ü'),
      'change_event',
      '9'.repeat(30),
    ];
    const parts = Array.from({ length: 1 + int(4) }, () => `${pick(names)}=${pick(values)}`);
    return `?${parts.join('&')}${rest === null ? '' : ''}`;
  }

  return function next(): FuzzRequest {
    const endpoint = pick(ENDPOINTS);
    const ws = workspaceSegment();
    let path =
      endpoint.rest === null
        ? '/api/me'
        : wsPath(ws.text, endpoint.rest.replace('{id}', pick(['rec_00000000-0000-0000-0000-000000000000', 'x', '%00', '..', 'r'.repeat(120), '%2e%2e'])));
    path += query(endpoint.rest);
    let raw = ws.raw;
    const headers: Record<string, string> = {};
    const auth = random();
    if (auth < 0.85) headers.authorization = `Bearer ${server.apiKey}`;
    else if (auth < 0.9)
      headers.authorization = pick([
        'Bearer',
        'Bearer ',
        `Basic ${server.apiKey}`,
        'Bearer gk_x',
        `Bearer ${'k'.repeat(5000)}`,
        `Bearer ${server.apiKey}${server.apiKey}`,
      ]);
    const method = chance(0.9) ? endpoint.method : pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND']);
    let body: string | Buffer | undefined;
    let oversized = false;
    let label = `${method} ${endpoint.rest ?? 'me'}`;
    const forms: (typeof FORMS)[number][] = [];
    if (endpoint.body || chance(0.1)) {
      const form = random();
      headers['content-type'] = 'application/json';
      if (form < 0.55) {
        body = mutatedBody(endpoint.body ?? 'evidence');
        label += ' mutated';
        forms.push('mutated');
      } else if (form < 0.65) {
        body = pick(['', '{', '}', '[', '{"a":1,}', '{"a" 1}', "{'a':1}", '{"a":1}{"b":2}', 'nul', '"\\x"', '{"a":"\u0001"}', '\ufeff{}', ' '.repeat(100)]);
        label += ' not-json';
        forms.push('not-json');
      } else if (form < 0.72) {
        body = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
        label += ' deep';
        forms.push('deep');
      } else if (form < 0.8) {
        headers['content-type'] = pick([
          'text/plain',
          'application/xml',
          'application/x-www-form-urlencoded',
          'multipart/form-data',
          'application/json; charset=latin1',
          'application/jsonx',
          '*/*',
          '',
          'application/json;;;',
          'APPLICATION/JSON',
        ]);
        body = JSON.stringify(evidenceRecord());
        label += ` content-type(${headers['content-type']})`;
        forms.push('content-type');
      } else if (form < 0.83) {
        body = Buffer.from(Array.from({ length: 1 + int(500) }, () => int(256)));
        label += ' binary';
        forms.push('binary');
      } else if (form < 0.845) {
        body = `{"record_type":"change_event","system_name":"s","payload":{"notes":"${'n'.repeat(BODY_LIMIT + int(1000))}"}}`;
        oversized = true;
        label += ' oversized';
        forms.push('oversized');
      } else if (form < 0.9) {
        body = randomJson(0);
        label += ' random-json';
        forms.push('random-json');
      } else {
        // the right outer shape, hostile members: a batch of random items, or an object of random members
        body =
          endpoint.body === 'batch'
            ? `{"records":[${Array.from({ length: int(4) }, () => (chance(0.5) ? JSON.stringify(attestation()) : randomJson(1))).join(',')}]}`
            : `{"record_type":${JSON.stringify(pick(RECORD_TYPES))},"system_name":${randomJson(3)},"payload":${randomJson(1)},"description":${randomJson(3)},"risk_tier":${randomJson(3)}}`;
        label += ' shaped';
        forms.push('shaped');
      }
    }
    if (chance(0.04)) {
      // header tricks only a raw socket can send
      raw = true;
      headers['x-govctl-source'] = pick(['cli', 'evil\u00ff', 'x'.repeat(10_000)]);
      label += ' raw-headers';
      forms.push('raw-headers');
    }
    if ((method === 'GET' || method === 'HEAD') && body !== undefined) raw = true;
    if (method === 'TRACE' || method === 'PROPFIND') raw = true;
    if (raw && typeof body === 'string' && body.length > 200_000) body = body.slice(0, 200_000);
    if (raw) oversized = false;
    if (method === 'HEAD') body = undefined;
    return { method, path, headers, ...(body !== undefined ? { body } : {}), raw, oversized, label, endpoint: endpointName(endpoint), forms };
  };
}

interface Outcome {
  status: number;
  body: string;
}

/** Sends a request over a raw socket, exactly as written, and reads the whole response. */
function sendRaw(port: number, request: FuzzRequest): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    socket.setTimeout(15_000, () => socket.destroy(new Error('raw request timed out')));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      if (split < 0 || !Number.isInteger(status)) return reject(new Error(`no HTTP response (${text.slice(0, 80)})`));
      const head = text.slice(0, split).toLowerCase();
      let body = text.slice(split + 4);
      if (head.includes('transfer-encoding: chunked')) {
        let decoded = '';
        for (let at = 0; ;) {
          const lineEnd = body.indexOf('\r\n', at);
          const size = parseInt(body.slice(at, lineEnd), 16);
          if (!size) break;
          decoded += body.slice(lineEnd + 2, lineEnd + 2 + size);
          at = lineEnd + 2 + size + 2;
        }
        body = decoded;
      }
      resolve({ status, body: Buffer.from(body, 'latin1').toString('utf8') });
    });
    const bodyBytes = request.body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(request.body) ? request.body : Buffer.from(request.body, 'utf8');
    const lines = [`${request.method} ${request.path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
    for (const [name, value] of Object.entries(request.headers)) lines.push(`${name}: ${value}`);
    if (request.body !== undefined) lines.push(`Content-Length: ${bodyBytes.length}`);
    socket.end(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8'), bodyBytes]));
  });
}

async function sendPooled(pool: Pool, request: FuzzRequest): Promise<Outcome> {
  const reply = await pool.request({
    method: request.method,
    path: request.path,
    headers: request.headers,
    ...(request.body !== undefined ? { body: request.body } : {}),
  });
  return { status: reply.statusCode, body: await reply.body.text() };
}

const KNOWN_CODES = new Set<string>(ERROR_CODES);

/** What is wrong with a response, or null when it is acceptable. */
function problem(request: FuzzRequest, outcome: Outcome): string | null {
  if (outcome.status >= 500) return `status ${outcome.status}`;
  if (request.method === 'HEAD') return null;
  let body: unknown;
  try {
    body = JSON.parse(outcome.body);
  } catch {
    return `body is not JSON: ${outcome.body.slice(0, 120)}`;
  }
  if (outcome.status < 400) return body !== null && typeof body === 'object' ? null : 'a 2xx body that is not an object';
  const error = body as Record<string, unknown>;
  const keys = Object.keys(error).sort().join(',');
  if (keys !== 'error,message' && keys !== 'error,field,message') return `error body keys ${keys}`;
  if (!KNOWN_CODES.has(error.error as string)) return `unknown error code ${String(error.error)}`;
  if (typeof error.message !== 'string' || error.message === '') return 'message is not a string';
  if ('field' in error && typeof error.field !== 'string') return 'field is not a string';
  return null;
}

describe('fuzz', () => {
  it(`survives ${MIN_REQUESTS}+ malformed and hostile requests (seed ${SEED}) with no 5xx and every error in the spec shape`, async () => {
    const port = Number(new URL(server.url).port);
    expect(new URL(server.url).hostname).toBe('127.0.0.1');
    const next = generator(prng(SEED));
    const pool = new Pool(server.url, { connections: CONCURRENCY, pipelining: 1, bodyTimeout: 20_000, headersTimeout: 20_000 });
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let sent = 0;
    let clientSideRefusals = 0;
    const endpointsSent = new Set<string>();
    const formsSent = new Set<string>();
    const deadline = Date.now() + TIME_BUDGET_MS;

    async function worker(): Promise<void> {
      while (sent < MIN_REQUESTS && Date.now() < deadline) {
        const request = next();
        sent++;
        endpointsSent.add(request.endpoint);
        for (const form of request.forms) formsSent.add(form);
        let outcome: Outcome;
        try {
          outcome = request.raw ? await sendRaw(port, request) : await sendPooled(pool, request);
        } catch (error) {
          const message = (error as Error).message;
          // undici refuses some values before sending; an oversized upload may be cut off after the 413.
          if ((error as { code?: string }).code === 'UND_ERR_INVALID_ARG' || request.oversized) {
            clientSideRefusals++;
            continue;
          }
          failures.push(`#${sent} ${request.label} ${request.method} ${request.path.slice(0, 120)}: no response (${message})`);
          continue;
        }
        statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
        const wrong = problem(request, outcome);
        if (wrong) failures.push(`#${sent} ${request.label} ${request.method} ${request.path.slice(0, 120)}: ${wrong}`);
      }
    }

    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    await pool.close();
    const summary = `seed ${SEED}: ${sent} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}, ${clientSideRefusals} refused client-side`;
    if (process.env.GOVCTL_FUZZ_VERBOSE) console.log(summary);
    expect(failures.slice(0, 20), `${summary}\n${failures.slice(0, 20).join('\n')}`).toEqual([]);
    expect(sent, summary).toBeGreaterThanOrEqual(MIN_REQUESTS);
    expect(clientSideRefusals, summary).toBeLessThan(sent / 20);
    // It saw every kind of answer, not just one.
    for (const status of [200, 201, 400, 401, 404, 413, 422]) expect(statuses.get(status) ?? 0, `${summary}: status ${status}`).toBeGreaterThan(0);
    // And every endpoint and every kind of damage: a smaller count must not lose one.
    expect([...endpointsSent].sort(), summary).toEqual(ENDPOINTS.map(endpointName).sort());
    expect([...formsSent].sort(), summary).toEqual([...FORMS].sort());

    // And it still works.
    expect((await call(server, 'GET', '/api/me')).status).toBe(200);
    const write = await call(server, 'POST', wsPath(server.workspaceId, 'grc/evidence'), { body: evidenceRecord() });
    expect(write.status).toBe(201);
    expect((await call(server, 'GET', wsPath(server.workspaceId, `grc/evidence/${write.json.record_id}`))).status).toBe(200);
  }, 120_000);
});
