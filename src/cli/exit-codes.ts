/**
 * The one place that decides exit codes (design/cli.md "Exit codes", style.md rule 4).
 * Commands never pick a number: they throw a typed error, and {@link exitCodeFor} maps it.
 */
import { CanonicalJsonError, JsonSyntaxError } from '../core/canonical-json.js';
import { SigningKeyError, UnsignableRecordError } from '../core/signing/errors.js';
import {
  ConfigError as ClientConfigError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  UnauthorizedError,
  ValidationError,
} from '../client/errors.js';
import {
  ConfigError,
  DataError,
  InputFileError,
  InterruptedError,
  LedgerCheckError,
  PartialFailureError,
  PipeClosedError,
  SignatureMismatchError,
  DatabaseUnreachableError,
  UsageError,
} from './errors.js';
import { GatesFailedError } from './gate-verdict.js';
import { NotAServiceError } from './service-check.js';

/** Exit codes of the public contract (design/cli.md); the names follow sysexits.h. */
export const EXIT = {
  OK: 0,
  /** `gates check`: a non-blocking gate fails */
  SOFT_FAIL: 1,
  /** `gates check`: a blocking gate fails; `verify`: a signature does not verify */
  HARD_FAIL: 2,
  USAGE: 64,
  DATA_ERROR: 65,
  NO_INPUT: 66,
  UNAVAILABLE: 69,
  INTERNAL: 70,
  TEMP_FAIL: 75,
  NO_PERMISSION: 77,
  CONFIG: 78,
  INTERRUPTED: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * What each exit code means, as `govctl help exit-codes` prints it, and in brief, as the footer of
 * `govctl --help` lists it ({@link exitCodeSummary}).
 */
export const EXIT_CODE_MEANINGS: readonly { code: ExitCode; meaning: string; brief: string }[] = [
  { code: EXIT.OK, meaning: 'success; every gate passing; every signature valid; an empty list', brief: 'ok' },
  { code: EXIT.SOFT_FAIL, meaning: '`gates check`: a non-blocking gate fails (soft fail)', brief: 'soft gate fail' },
  {
    code: EXIT.HARD_FAIL,
    meaning: '`gates check`: a blocking gate fails (hard fail); `verify`: a signature does not verify; `ledger`: a log check fails',
    brief: 'hard gate fail, signature invalid or log check failed',
  },
  { code: EXIT.USAGE, meaning: 'usage error: unknown command or flag, missing argument, a flag value outside its type, format or choices', brief: 'usage' },
  {
    code: EXIT.DATA_ERROR,
    meaning:
      'bad input data: a record fails validation locally or with 400/422 from the service, unreadable JSON; an offline `verify` input that holds no record',
    brief: 'bad data',
  },
  { code: EXIT.NO_INPUT, meaning: 'an input file does not exist or cannot be read', brief: 'missing file' },
  {
    code: EXIT.UNAVAILABLE,
    meaning: 'the service (or the PostgreSQL database of `serve`/`admin`) cannot be reached, timed out, or answered 5xx',
    brief: 'service unavailable',
  },
  { code: EXIT.INTERNAL, meaning: 'internal error (a bug)', brief: 'internal' },
  { code: EXIT.TEMP_FAIL, meaning: 'rate limited and still limited after the retry', brief: 'rate limited' },
  { code: EXIT.NO_PERMISSION, meaning: '401 or 403: the service refused the API key (invalid, revoked, expired, or without access)', brief: 'access denied' },
  {
    code: EXIT.CONFIG,
    meaning: 'configuration error: a missing setting (no API key or base URL), unreadable config file, malformed signing key',
    brief: 'configuration',
  },
  { code: EXIT.INTERRUPTED, meaning: 'interrupted', brief: 'interrupted' },
];

/** `0 ok, 1 soft gate fail, …`: every exit code in brief, for the root help's footer. */
export function exitCodeSummary(): string {
  return EXIT_CODE_MEANINGS.map(({ code, brief }) => `${code} ${brief}`).join(', ');
}

/**
 * The exit code for an error that ended a command. Anything unrecognised is an internal error
 * (70), never 1: 1 means a soft gate failure and scripts rely on that.
 */
export function exitCodeFor(error: unknown): ExitCode {
  // The CLI's own errors. Two carry an outcome decided from exit codes already: the gates'
  // verdict (1 or 2, gate-verdict.ts) and the worst of several records' (results.ts).
  if (error instanceof GatesFailedError || error instanceof PartialFailureError) return error.exitCode;
  if (error instanceof UsageError) return EXIT.USAGE;
  if (error instanceof DataError) return EXIT.DATA_ERROR;
  if (error instanceof InputFileError) return EXIT.NO_INPUT;
  if (error instanceof ConfigError) return EXIT.CONFIG;
  if (error instanceof DatabaseUnreachableError) return EXIT.UNAVAILABLE;
  if (error instanceof SignatureMismatchError || error instanceof LedgerCheckError) return EXIT.HARD_FAIL;
  if (error instanceof InterruptedError) return EXIT.INTERRUPTED;
  if (error instanceof PipeClosedError) return EXIT.OK;
  // Nothing at the base URL answers like the service: as if no service were there.
  if (error instanceof NotAServiceError) return EXIT.UNAVAILABLE;
  if (error instanceof ValidationError) return EXIT.DATA_ERROR;
  if (error instanceof UnauthorizedError) return EXIT.NO_PERMISSION;
  // 404 means an unknown workspace or one the key does not belong to (wire.md §5): the
  // configured workspace id is wrong, a configuration error (docs/decisions.md).
  if (error instanceof NotFoundError) return EXIT.CONFIG;
  if (error instanceof RateLimitedError) return EXIT.TEMP_FAIL;
  if (error instanceof ServerError || error instanceof NetworkError) return EXIT.UNAVAILABLE;
  if (error instanceof ClientConfigError) return EXIT.CONFIG;
  if (error instanceof SigningKeyError) return EXIT.CONFIG;
  if (error instanceof JsonSyntaxError || error instanceof CanonicalJsonError || error instanceof UnsignableRecordError) return EXIT.DATA_ERROR;
  return EXIT.INTERNAL;
}

/**
 * How bad an outcome is, for commands that collect several failures (import, batch) and
 * exit with the worst: a problem with the whole run (access, configuration, the service being
 * down) outranks a problem with one record.
 */
const SEVERITY: readonly number[] = [
  EXIT.OK,
  EXIT.DATA_ERROR,
  EXIT.TEMP_FAIL,
  EXIT.UNAVAILABLE,
  EXIT.INTERNAL,
  EXIT.NO_INPUT,
  EXIT.NO_PERMISSION,
  EXIT.CONFIG,
  EXIT.USAGE,
  EXIT.INTERRUPTED,
];

/** The worse of two exit codes by {@link SEVERITY}. */
export function worseExitCode(a: ExitCode, b: ExitCode): ExitCode {
  return SEVERITY.indexOf(b) > SEVERITY.indexOf(a) ? b : a;
}
