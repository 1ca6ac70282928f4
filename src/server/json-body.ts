/**
 * Request bodies: JSON only, read with core's lossless reader so that number lexemes keep their
 * meaning (`85.0` stays a float, `12345678901234567890` keeps every digit; docs/wire-format.md). Anything
 * else is a 400 `bad_request` (docs/wire-format.md): a body that is not JSON, a wrong content type, a
 * charset other than UTF-8, a Content-Encoding (gzip, …), bytes that are not valid UTF-8 (they
 * would otherwise be replaced with U+FFFD and stored as something other than what was sent).
 * Bodies over the route's limit are 413 (Fastify checks the length).
 *
 * A large body is parsed in a turn of the event loop of its own (limits.ts, TurnTaker), so that
 * several large bodies arriving together do not hold up other clients' requests back to back.
 */
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isPlainObject, JsonSyntaxError, parseJsonLossless, type JsonValue } from '../core/index.js';
import { badRequest } from './errors.js';
import type { TurnTaker } from './limits.js';

/** Largest request body on every endpoint but the batch one: 1 MiB. */
export const BODY_LIMIT = 1024 * 1024;

/** Largest body of POST attestations/batch: 8 MiB (1000 attestations of up to ~8 KiB each). */
export const BATCH_BODY_LIMIT = 8 * 1024 * 1024;

/** A JSON object as the lossless reader returns it. */
export type JsonObject = { [key: string]: JsonValue };

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)"?/i;

/** Bodies of at least this many bytes are parsed in a turn of their own. */
const TURN_AT_BYTES = 64 * 1024;

type Done = (error: Error | null, body?: unknown) => void;

function parse(bytes: Buffer, done: Done): void {
  if (!isUtf8(bytes)) {
    done(badRequest('the request body is not valid UTF-8'), undefined);
    return;
  }
  try {
    done(null, parseJsonLossless(bytes.toString('utf8')));
  } catch (error) {
    if (error instanceof JsonSyntaxError) done(badRequest(`the request body is not valid JSON: ${error.message}`), undefined);
    else done(error as Error, undefined);
  }
}

/** A header value to quote in a message: printable ASCII, at most 40 characters. */
function printableToken(value: string): string {
  const token = value.replace(/[^\x21-\x7e]/g, '?');
  return token.length > 40 ? `${token.slice(0, 40)}…` : token;
}

/** Replaces Fastify's body parsers with the one lossless JSON parser. */
export function registerJsonBodyParser(app: FastifyInstance, turns?: TurnTaker): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      done(badRequest('the request body must be UTF-8 JSON (charset=utf-8)'), undefined);
      return;
    }
    // Bodies are read as sent: a compressed one would otherwise be reported as invalid UTF-8.
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      done(badRequest(`Content-Encoding ${printableToken(encoding)} is not accepted: send the JSON body uncompressed`), undefined);
      return;
    }
    const bytes = body as Buffer;
    if (turns !== undefined && bytes.length >= TURN_AT_BYTES) void turns.take().then(() => parse(bytes, done));
    else parse(bytes, done);
  });
}

/** The request body as a JSON object, or 400 when it is missing or not an object. */
export function bodyObject(request: FastifyRequest): JsonObject {
  const body = request.body;
  if (body === undefined || body === null) throw badRequest('the request needs a JSON object body with Content-Type: application/json');
  if (!isPlainObject(body)) throw badRequest('the request body must be a JSON object');
  return body as JsonObject;
}
