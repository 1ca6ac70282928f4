/**
 * Whether what answers at the base URL is the governance service at all. Without this check a web
 * server, a proxy's page or a wrong path reaches the client library as a reply it cannot read,
 * which it reports as its closest meaning ("workspace id is not set and could not be resolved",
 * a 404 "check the workspace id"): the user then checks the wrong thing. Here such a reply is
 * reported for what it is: the URL tried, the status and the content type (sanitised: all of it
 * came from the server). An `https://` URL that reaches a plain HTTP server gets the same
 * treatment instead of OpenSSL's "wrong version number".
 */
import { AttestationError } from '../client/errors.js';
import type { Transport, TransportResponse } from '../client/transport.js';
import { displayUrl, serviceAddress, terminalText } from './terminal-text.js';

/** The base URL does not lead to a governance service (exit 69, like a service that is not there). */
export class NotAServiceError extends AttestationError {
  override name = 'NotAServiceError';
}

const HINT_URL =
  "check the base URL (--base-url, GOVCTL_BASE_URL or SERVICE_BASE_URL): the service's root, where GET /api/me answers, e.g. https://governance.example.com";

/** What to do about it, for the error's hint (errors.ts); the plain-HTTP message says it already. */
export function notAServiceHint(error: NotAServiceError): string | undefined {
  return error.code === 'malformed_response' ? HINT_URL : undefined;
}

function header(reply: TransportResponse, name: string): string | undefined {
  const value = reply.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** At most 80 characters of a server's header, control characters escaped. */
function shown(text: string): string {
  const cut = text.length > 80 ? `${text.slice(0, 80)}…` : text;
  return terminalText(cut);
}

/** A JSON media type: application/json, application/x-ndjson, or any `+json`. */
function isJsonType(type: string): boolean {
  return /^application\/(?:json|x-ndjson|[\w.-]+\+json)\b/.test(type);
}

/**
 * Why a reply cannot come from the service, or undefined when it may. The service answers every
 * error (4xx) as JSON (docs/service.md "Errors"), never HTML and never a redirect, and GET /api/me exists; a 5xx
 * may be a proxy's page for a service that is down, and stays the client's to report (69).
 */
function notTheService(method: string, path: string, reply: TransportResponse): string | undefined {
  const status = reply.status;
  if (status >= 500) return undefined;
  const type = (header(reply, 'content-type') ?? '').trim().toLowerCase();
  const typeText = type === '' ? 'no content type' : shown(type.split(';')[0].trim());
  if (status >= 300 && status < 400) {
    const location = header(reply, 'location');
    return `${status} (${typeText}${location ? `, redirecting to ${displayUrl(location) === '(not a URL)' ? shown(location) : displayUrl(location)}` : ''})`;
  }
  if (/^(?:text\/html|application\/xhtml)/.test(type)) return `${status} ${typeText}`;
  if (status >= 400 && !isJsonType(type)) return `${status} ${typeText}`;
  if (status === 404 && method === 'GET' && path.split('?')[0] === '/api/me') return `${status} ${typeText} (the service always answers GET /api/me)`;
  return undefined;
}

/** Whether a transport failure is TLS meeting a server that speaks plain HTTP. */
function isPlainHttpAnswer(error: unknown): boolean {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    const code = (current as { code?: unknown }).code;
    if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_HTTP_REQUEST') return true;
    if (/wrong version number|http request/i.test(current.message) && /ssl|tls|EPROTO/i.test(current.message + String(code))) return true;
  }
  return false;
}

/**
 * A transport that reports replies that cannot come from the governance service as
 * {@link NotAServiceError}, and an https:// base URL answered in plain HTTP as such.
 */
export function checkServiceReplies(transport: Transport, baseUrl: string): Transport {
  const base = serviceAddress(baseUrl);
  const secure = baseUrl.trim().toLowerCase().startsWith('https:');
  return {
    description: transport.description,
    async request(request, signal) {
      let reply: TransportResponse;
      try {
        reply = await transport.request(request, signal);
      } catch (error) {
        if (secure && isPlainHttpAnswer(error)) {
          const plain = base.replace(/^https:/, 'http:');
          throw new NotAServiceError('network_error', `the server at ${base} speaks plain HTTP, not HTTPS; use ${plain} or check the port`, { cause: error });
        }
        throw error;
      }
      const why = notTheService(request.method, request.path, reply);
      if (why !== undefined) {
        throw new NotAServiceError(
          'malformed_response',
          `nothing at ${base} answers like a governance service: ${request.method} ${base}${request.path.split('?')[0]} answered ${why}`,
          { status: reply.status },
        );
      }
      return reply;
    },
    close: () => transport.close?.() ?? Promise.resolve(),
  };
}
