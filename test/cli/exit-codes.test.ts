/** exitCodeFor is the one place that turns an error into the exit code of the public contract. */
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  DataError,
  InputFileError,
  InterruptedError,
  PartialFailureError,
  PipeClosedError,
  SignatureMismatchError,
  UsageError,
} from '../../src/cli/errors.js';
import { EXIT, exitCodeFor } from '../../src/cli/exit-codes.js';
import { GatesFailedError } from '../../src/cli/gate-verdict.js';

describe('exitCodeFor', () => {
  it("gives each of the command line's errors its code of the contract", () => {
    expect(exitCodeFor(new UsageError('x'))).toBe(64);
    expect(exitCodeFor(new DataError('x'))).toBe(65);
    expect(exitCodeFor(new InputFileError('x'))).toBe(66);
    expect(exitCodeFor(new ConfigError('x'))).toBe(78);
    expect(exitCodeFor(new SignatureMismatchError('x'))).toBe(2);
    expect(exitCodeFor(new InterruptedError())).toBe(130);
    expect(exitCodeFor(new PipeClosedError())).toBe(0);
  });

  it('keeps the outcome a gate verdict or a tally of records decided, and makes anything unknown internal (70, never 1)', () => {
    expect(exitCodeFor(new GatesFailedError('soft', 1))).toBe(1);
    expect(exitCodeFor(new GatesFailedError('hard', 2))).toBe(2);
    expect(exitCodeFor(new PartialFailureError('some failed', EXIT.UNAVAILABLE))).toBe(69);
    expect(exitCodeFor(new Error('a bug'))).toBe(70);
    expect(exitCodeFor('not even an error')).toBe(70);
  });
});
