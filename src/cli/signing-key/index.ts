/**
 * `govctl signing-key generate` / `govctl signing-key public` (docs/cli.md).
 */
import { Command } from 'commander';
import { SigningKey } from '../../core/index.js';
import { addExamples } from '../command-kit.js';
import type { Factory } from '../factory.js';
import { printJson } from '../render.js';

export function createSigningKeyCommand(factory: Factory): Command {
  const group = new Command('signing-key').description('make a signing key; show the public key of the configured one');
  const generate = new Command('generate')
    .description('print a new 32-byte signing key as 64 hex characters')
    .action(async () => runGenerate({ json: factory.globals.json === true }, factory));
  const publicKey = new Command('public')
    .description('print the Ed25519 public key of the configured signing key (for verifying witness_sig)')
    .action(async () => runPublic({ json: factory.globals.json === true }, factory));
  group.addCommand(
    addExamples(generate, ['govctl signing-key generate > signing.key && chmod 600 signing.key', 'export SERVICE_SIGNING_KEY=$(govctl signing-key generate)']),
  );
  group.addCommand(
    addExamples(publicKey, ['govctl signing-key public --signing-key-file signing.key', 'SERVICE_SIGNING_KEY=… govctl signing-key public --json']),
  );
  return addExamples(group, ['govctl signing-key generate', 'govctl signing-key public']);
}

/** Options of `signing-key generate` and `signing-key public`. */
export interface SigningKeyOptions {
  json: boolean;
}

/**
 * Prints a new key on stdout (the only command that ever prints a key); on a terminal, a hint on
 * stderr about where to keep it. `--json`: `{signing_key, public_key}`.
 */
export async function runGenerate(options: SigningKeyOptions, deps: Factory): Promise<void> {
  const { key, hex } = SigningKey.generate();
  if (options.json) await printJson(deps.io.stdout, { signing_key: hex, public_key: key.publicKeyHex });
  else await deps.io.stdout.write(`${hex}\n`);
  if (deps.io.stdout.isTTY) {
    await deps.note('keep this key secret: store it in your secret manager or a file only you can read (chmod 600),');
    await deps.note('and give it as SERVICE_SIGNING_KEY or --signing-key-file FILE. Anyone with it can sign as you.');
  }
}

/** Prints the configured key's Ed25519 public key (hex); `--json`: `{public_key}`. */
export async function runPublic(options: SigningKeyOptions, deps: Factory): Promise<void> {
  const key = await deps.requireSigningKey('signing-key public');
  if (options.json) await printJson(deps.io.stdout, { public_key: key.publicKeyHex });
  else await deps.io.stdout.write(`${key.publicKeyHex}\n`);
}
