/**
 * The signing modules' errors, apart from the modules themselves so that code that only reports
 * them (the command line's exit codes) does not load node:crypto.
 */

/** A signing key that is not 64 hex characters. The message names the setting, never the value. */
export class SigningKeyError extends Error {
  override readonly name = 'SigningKeyError';
  constructor(readonly setting: string) {
    super(`${setting} must be 64 hex characters (a 32-byte key); make one with \`govctl signing-key generate\``);
  }
}

/** A record that cannot be signed as it stands (no occurred_at yet, or not canonical JSON). */
export class UnsignableRecordError extends Error {
  override readonly name = 'UnsignableRecordError';
}
