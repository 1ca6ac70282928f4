/**
 * The keys `govctl ledger` checks with: the pinned log key (a setting) and witness keys (flags).
 * The checks themselves are the client's verifier (src/client/verify), shared with `govctl mcp`;
 * one that fails is a {@link LedgerCheckError} (exit 2) naming what failed.
 */
import { terminalText } from '../terminal-text.js';
import { CosignatureVerifier, Ed25519NoteVerifier } from '../../core/ledger/index.js';
import { ConfigError, LedgerCheckError, UsageError } from '../errors.js';
import type { Factory } from '../factory.js';

export { LedgerCheckError };

/** The pinned log key as a verifier. @throws ConfigError (78) for a malformed one, naming where it came from */
export function logVerifier(vkey: string, where: string): Ed25519NoteVerifier {
  try {
    return Ed25519NoteVerifier.fromVerifierKey(vkey.trim());
  } catch (error) {
    throw new ConfigError(`${where} is not a log verifier key (${(error as Error).message})`, {
      field: 'ledgerKey',
      hint: 'it looks like <origin>+<8 hex digits>+<base64>, as `govctl admin init` prints it',
    });
  }
}

/**
 * The log key pinned by the `ledgerKey` setting (--ledger-key, GOVCTL_LEDGER_KEY, a config file),
 * or undefined when none is set. `govctl ledger` and the ledger tools of `govctl mcp` both take it here.
 * @throws ConfigError (78) for a malformed one, naming where it came from
 */
export async function configuredLogKey(factory: Factory): Promise<Ed25519NoteVerifier | undefined> {
  const settings = await factory.settings();
  if (settings.ledgerKey === undefined) return undefined;
  return logVerifier(settings.ledgerKey, settings.sources.ledgerKey?.name ?? 'the ledgerKey setting');
}

/** The pinned log key, required. @throws ConfigError (78) when none is set or it is malformed */
export async function pinnedLogKey(factory: Factory): Promise<Ed25519NoteVerifier> {
  const log = await configuredLogKey(factory);
  if (log === undefined) {
    throw new ConfigError('no log key is pinned', {
      field: 'ledgerKey',
      hint: 'give --ledger-key KEY or set GOVCTL_LEDGER_KEY to the verifier key `govctl admin init` printed (obtain it from the operator, not from the service)',
    });
  }
  return log;
}

/** Witness keys given with --witness. @throws UsageError (64) for a malformed one */
export function witnessVerifiers(vkeys: readonly string[]): CosignatureVerifier[] {
  return vkeys.map((vkey) => {
    try {
      return CosignatureVerifier.fromVerifierKey(vkey.trim());
    } catch (error) {
      throw new UsageError(`--witness ${terminalText(vkey)} is not a witness verifier key (${(error as Error).message})`, { field: '--witness' });
    }
  });
}
