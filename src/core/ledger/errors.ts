/** Errors of the transparency-log formats. Messages name what is wrong and never carry key material. */

/** Text or bytes that are not a well-formed note, checkpoint, key, tile path, entry bundle or entry. */
export class LedgerFormatError extends Error {
  override readonly name = 'LedgerFormatError';
}

/** A well-formed note whose signatures do not prove what was asked (no trusted signature, or a bad one). */
export class LedgerVerificationError extends Error {
  override readonly name = 'LedgerVerificationError';
}
