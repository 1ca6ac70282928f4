/**
 * The command line's own errors and how any error is shown: one stderr line that says what
 * failed and what to do, or with `--json` one object `{error, message, field?}` (docs/cli.md
 * "Output"). The exit code of each is decided in exit-codes.ts, nowhere else.
 */
import { JsonSyntaxError } from '../core/canonical-json.js';
import { SigningKeyError } from '../core/signing/errors.js';
import {
  AttestationError,
  type AttestationErrorCode,
  ConfigError as ClientConfigError,
  LedgerCheckError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  UnauthorizedError,
  ValidationError,
} from '../client/errors.js';
import type { ExitCode } from './exit-codes.js';
import { NotAServiceError, notAServiceHint } from './service-check.js';
import { redactUrls, terminalText } from './terminal-text.js';

/**
 * Every `error` code the command line prints (the `--json` error object's `error` member), and what
 * each means: the client library's codes (AttestationErrorCode, the service's among them) and the
 * command line's own. The one list of them: the types below make every code an error can carry one
 * of these keys, and docs/cli.md "Error codes" mirrors it (a test compares the two).
 */
export const ERROR_CODES = {
  // the service's (docs/service.md "Errors"), as the client library passes them on
  bad_request: 'the service refused the request as malformed (400)',
  validation_error: 'a record or request failed validation, locally or at the service (400/422)',
  unauthorized: 'the service refused the API key (401)',
  forbidden: 'the API key has no access to this (403)',
  not_found: 'the workspace, record or key does not exist, or the API key does not belong to it (404)',
  payload_too_large: 'the request body is larger than the service accepts (413)',
  rate_limited: 'still rate limited after waiting for Retry-After and retrying (429)',
  server_error: 'the service failed (5xx)',
  service_unavailable: 'the service cannot do this now (503: its database went away, or it has no log key); retry later',
  // the client library's own
  http_error: 'the service answered a 4xx status the specification does not name',
  network_error: 'the service cannot be reached (refused, reset, DNS, TLS; an https:// URL answered in plain HTTP)',
  timeout: 'no reply within the timeout (15 s, or --timeout)',
  malformed_response: 'the reply is not one the service sends: not JSON, not the expected shape, or nothing at the base URL answers like the service',
  config_error: 'a setting is missing or malformed, a config or key file cannot be read',
  workspace_unresolved: 'no workspace id is set and GET /api/me did not give one',
  client_closed: 'a request was made after the client was closed (a bug)',
  internal_error: 'a bug in govctl',
  // the command line's own
  usage_error: 'the command line is wrong: unknown command or flag, missing argument, a flag value outside its type, format or choices',
  invalid_input: 'input data is not valid',
  invalid_json: 'input is not valid JSON',
  invalid_database: 'the file is not a govctl database',
  database_unreachable: 'the PostgreSQL database of `serve` or `admin` cannot be reached (refused, unknown host, timeout)',
  input_file_error: 'an input file does not exist or cannot be read',
  signature_invalid: 'one or more signatures do not verify',
  ledger_check_failed: 'a transparency-log check failed',
  attestation_rejected: '`gates verify-attestation`: the verdict does not show that this artifact passed (signature, subject or result)',
  gates_failed: '`gates check`: a gate fails (exit 1 non-blocking, 2 blocking)',
  partial_failure: 'some records of an import or batch failed (each is on its own line)',
  interrupted: 'Ctrl-C',
  pipe_closed: 'never printed: the reader of stdout went away, and the run ends quietly with 0',
} as const satisfies Record<AttestationErrorCode, string> & Record<string, string>;

/** A code of {@link ERROR_CODES}. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Base of the CLI's errors: a closed code for `--json`, an optional hint and field (the exit code is exit-codes.ts's). */
export abstract class CliError extends Error {
  /** the `error` member of the `--json` form */
  abstract readonly code: ErrorCode;
  /** what to do about it, appended to the message */
  readonly hint?: string;
  /** the offending field or flag, when one applies */
  readonly field?: string;

  constructor(message: string, options: { hint?: string; field?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    if (options.hint !== undefined) this.hint = options.hint;
    if (options.field !== undefined) this.field = options.field;
  }
}

/** Unknown command or flag, missing or malformed argument. */
export class UsageError extends CliError {
  override readonly name = 'UsageError';
  readonly code = 'usage_error';
}

/** Input data that is not valid: a record that fails validation, unreadable JSON. */
export class DataError extends CliError {
  override readonly name = 'DataError';
  readonly code: ErrorCode;

  constructor(message: string, options: { hint?: string; field?: string; cause?: unknown; code?: ErrorCode } = {}) {
    super(message, options);
    this.code = options.code ?? 'invalid_input';
  }
}

/** An input file that does not exist or cannot be read. */
export class InputFileError extends CliError {
  override readonly name = 'InputFileError';
  readonly code = 'input_file_error';
}

/** A missing or malformed setting, an unreadable or malformed config file. */
export class ConfigError extends CliError {
  override readonly name = 'ConfigError';
  readonly code = 'config_error';
}

/** The PostgreSQL database of `serve` or `admin` cannot be reached now (refused, unknown host, timeout). */
export class DatabaseUnreachableError extends CliError {
  override readonly name = 'DatabaseUnreachableError';
  readonly code = 'database_unreachable';
}

/** One or more signatures do not verify; the report is already on stdout. */
export class SignatureMismatchError extends CliError {
  override readonly name = 'SignatureMismatchError';
  readonly code = 'signature_invalid';
}

/** A transparency-log check that failed (`govctl ledger`, exit 2): the client's, which its verifier throws. */
export { LedgerCheckError } from '../client/errors.js';

/** `gates verify-attestation` (exit 2): the envelope does not prove a pass for the artifact; the message names why. */
export class AttestationRejectedError extends CliError {
  override readonly name = 'AttestationRejectedError';
  readonly code = 'attestation_rejected';
}

/**
 * Several records of one run failed (import, batch); each was reported on its own line, and
 * `exitCode` is the worst of theirs (the command's tally, from exit-codes.ts's exitCodeFor and
 * worseExitCode), which the run ends with.
 */
export class PartialFailureError extends CliError {
  override readonly name = 'PartialFailureError';
  readonly code = 'partial_failure';

  constructor(
    message: string,
    readonly exitCode: ExitCode,
    options: { hint?: string } = {},
  ) {
    super(message, options);
  }
}

/** Ctrl-C. */
export class InterruptedError extends CliError {
  override readonly name = 'InterruptedError';
  readonly code = 'interrupted';

  constructor() {
    super('interrupted');
  }
}

/**
 * The reader of stdout went away (`govctl … | head -1`). Not a failure: the run ends quietly
 * and successfully, as `yes | head -1` does.
 */
export class PipeClosedError extends CliError {
  override readonly name = 'PipeClosedError';
  readonly code = 'pipe_closed';

  constructor() {
    super('stdout was closed by its reader');
  }
}

/** What an error looks like to the user. */
export interface ErrorDescription {
  /** the `error` member of the JSON form: a closed set of codes */
  code: ErrorCode;
  message: string;
  field?: string;
  /** what to do, for the text form */
  hint?: string;
}

/** How long the service asked us to wait, for a hint: `5 seconds`, `a minute` when it did not say. */
function waitText(retryAfterMs: number | undefined): string {
  if (retryAfterMs === undefined || !Number.isFinite(retryAfterMs) || retryAfterMs <= 0) return 'a minute';
  const seconds = Math.ceil(retryAfterMs / 1000);
  return seconds === 1 ? '1 second' : `${seconds} seconds`;
}

/** The hint for each kind of client error: what to check to make it work. */
function clientHint(error: AttestationError): string | undefined {
  if (error instanceof LedgerCheckError) return error.hint;
  if (error instanceof NotAServiceError) return notAServiceHint(error);
  // The client's message already says to check the key.
  if (error instanceof UnauthorizedError) return undefined;
  if (error instanceof NotFoundError) return "check the workspace id (--workspace or SERVICE_WORKSPACE_ID), or leave it unset to use the key's own workspace";
  if (error instanceof RateLimitedError) return `wait ${waitText(error.retryAfterMs)} and run the command again`;
  if (error instanceof NetworkError) return 'check the base URL (--base-url or SERVICE_BASE_URL) and that the service is running';
  if (error instanceof ServerError) return 'the service failed; try again later or ask its operator';
  if (error instanceof ClientConfigError) return 'see `govctl config show` for the settings in effect';
  if (error instanceof ValidationError) return 'fix the input and run the command again';
  return undefined;
}

/** Describes any error for rendering; unknown errors are internal errors (a bug). */
export function describeError(error: unknown): ErrorDescription {
  if (error instanceof CliError) {
    return withOptional({ code: error.code, message: error.message }, error.field, error.hint);
  }
  if (error instanceof AttestationError) {
    return withOptional({ code: error.code, message: error.message }, error.field, clientHint(error));
  }
  if (error instanceof SigningKeyError) return { code: 'config_error', message: error.message };
  if (error instanceof JsonSyntaxError)
    return { code: 'invalid_json', message: `the input is not valid JSON: ${error.message}`, hint: 'fix the JSON and run the command again' };
  const message = error instanceof Error ? error.message : String(error);
  return {
    code: 'internal_error',
    message: `internal error: ${message}`,
    hint: 'this is a bug in govctl; please report it with the command you ran (add -v for details)',
  };
}

function withOptional(description: ErrorDescription, field: string | undefined, hint: string | undefined): ErrorDescription {
  if (field !== undefined) description.field = field;
  if (hint !== undefined) description.hint = hint;
  return description;
}

/** Collapses line breaks so that an error is always one line. */
export function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}

/**
 * The error as the user sees it: `govctl: <what failed>; <what to do>` on one line, or with
 * `json` the object `{error, message, field?}` on one line. The text form may quote the service's
 * `message`: its control characters and bidi controls are shown as visible escapes.
 */
export function formatError(error: unknown, json: boolean): string {
  const described = describeError(error);
  // A URL in a message (a base URL quoted by a library) never shows its userinfo or query.
  described.message = redactUrls(described.message);
  if (json) {
    const body: Record<string, string> = { error: described.code, message: oneLine(described.message) };
    if (described.field !== undefined) body.field = described.field;
    return JSON.stringify(body);
  }
  const hint = described.hint ? `; ${described.hint}` : '';
  return terminalText(`govctl: ${oneLine(described.message)}${hint}`);
}
