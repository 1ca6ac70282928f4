/**
 * The verdict of `govctl gates check` (design/cli.md "Exit codes"), pure: check the service's reply
 * and pick the exit code. A gate check fails closed: a reply that is not a well-formed gate list
 * is treated like a service that cannot be reached (69, docs/exit-codes.md), never as a pass.
 */
import { isJsonNumber, jsonNumberValue } from '../core/canonical-json.js';
import { NetworkError } from '../client/errors.js';
import type { Gate } from '../client/wire-types.js';
import { CliError } from './errors.js';

/** `--fail-on`: which failures fail the run. */
export const FAIL_ON = ['soft', 'hard', 'never'] as const;
export type FailOn = (typeof FAIL_ON)[number];

/** A gate's outcome, as the formats name it. */
export type GateStatus = 'pass' | 'soft' | 'hard';

/** A checked gate: the wire gate, and its outcome. */
export interface CheckedGate {
  gate: Gate;
  status: GateStatus;
}

/**
 * Gates failed: the run's exit code is the verdict (1 soft, 2 hard). The report is already on
 * stdout; main.ts adds this one line on stderr.
 */
export class GatesFailedError extends CliError {
  override readonly name = 'GatesFailedError';
  readonly code = 'gates_failed';

  constructor(
    message: string,
    readonly exitCode: 1 | 2,
    options: { hint?: string } = {},
  ) {
    super(message, options);
  }
}

function malformed(why: string): NetworkError {
  return new NetworkError('malformed_response', `GET grc/gates/check: the reply is not a gate list (${why}); not passing a gate on it`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Checks a reply of GET grc/gates/check (spec §2.10, §4.8): `{gates: [...]}`, each gate with a
 * string `gate_id` and `name`, booleans `passing` and `blocking`, an `exit_code` of 0, 1 or 2 that
 * agrees with them (0 exactly when passing; 2 exactly when a blocking gate fails), and a string
 * `reason` when present. An empty list is refused too: a gate cannot pass on nothing.
 * @throws NetworkError `malformed_response` (exit 69) naming the first problem
 */
export function checkGatesReply(body: unknown): CheckedGate[] {
  if (!isObject(body) || !Array.isArray(body.gates)) throw malformed('no "gates" array');
  if (body.gates.length === 0) throw malformed('the service reported no gates');
  return body.gates.map((value: unknown, index: number) => {
    const at = `gates[${index}]`;
    if (!isObject(value)) throw malformed(`${at} is not an object`);
    for (const key of ['gate_id', 'name'] as const) {
      if (typeof value[key] !== 'string' || value[key] === '') throw malformed(`${at}.${key} is not a non-empty string`);
    }
    for (const key of ['passing', 'blocking'] as const) {
      if (typeof value[key] !== 'boolean') throw malformed(`${at}.${key} is not a boolean`);
    }
    const raw = value.exit_code;
    const code = isJsonNumber(raw) ? jsonNumberValue(raw) : NaN;
    if (code !== 0 && code !== 1 && code !== 2) throw malformed(`${at}.exit_code is not 0, 1 or 2`);
    if (value.reason !== undefined && value.reason !== null && typeof value.reason !== 'string') throw malformed(`${at}.reason is not a string`);
    const passing = value.passing as boolean;
    const blocking = value.blocking as boolean;
    if (passing !== (code === 0)) throw malformed(`${at}: passing is ${passing} but exit_code is ${code}`);
    if (!passing && blocking !== (code === 2)) throw malformed(`${at}: blocking is ${blocking} but exit_code is ${code}`);
    const status: GateStatus = code === 0 ? 'pass' : code === 2 ? 'hard' : 'soft';
    return { gate: value as unknown as Gate, status };
  });
}

/** The highest exit code among the gates: 0, 1 or 2. */
export function gatesVerdict(gates: readonly CheckedGate[]): 0 | 1 | 2 {
  return gates.some((checked) => checked.status === 'hard') ? 2 : gates.some((checked) => checked.status === 'soft') ? 1 : 0;
}

/**
 * The exit code after `--fail-on` (design/cli.md): `soft` keeps the gates' verdict, `hard` lets
 * soft failures pass (1 → 0), `never` always passes (report only).
 */
export function applyFailOn(verdict: 0 | 1 | 2, failOn: FailOn): 0 | 1 | 2 {
  if (failOn === 'never') return 0;
  if (failOn === 'hard' && verdict === 1) return 0;
  return verdict;
}
