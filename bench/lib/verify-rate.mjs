// @ts-check
/**
 * The single-core Ed25519 verification rate, as a child process (runChild, pinned to the server's
 * core): core's `verifyEd25519` in a tight loop for about `--seconds`, over `--messages` distinct
 * messages, each the real witness message of a distinct attestation (core's witnessMessage),
 * signed with core's SigningKey. The public key is one key, as in the load test.
 *
 * This is the ceiling for the batch endpoint: every attestation costs at least one verification.
 *
 * IPC: `{ type: 'ready', perSecond, verified, seconds, messageBytes }`.
 */
import { parseArgs } from 'node:util';
import { DIST } from './harness.mjs';
import { signedAttestations } from './records.mjs';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '2' },
    messages: { type: 'string', default: '10000' },
  },
});

try {
  const core = await import(DIST.core);
  const { key } = core.SigningKey.generate();
  const workspaceId = 'ws_00000000-0000-7000-8000-000000000000';
  const attestations = signedAttestations(core, key, workspaceId, Number(values.messages));
  const cases = attestations.map((a) => ({ message: core.witnessMessage(a, workspaceId), sig: a.witness_sig, pub: a.verifying_key_hex }));
  const messageBytes = Buffer.byteLength(cases[0].message);

  // Warm up (JIT, key cache), then measure.
  for (let i = 0; i < 2000; i += 1) core.verifyEd25519(cases[i % cases.length].message, cases[i % cases.length].sig, cases[i % cases.length].pub);
  const budgetNs = BigInt(Math.round(Number(values.seconds) * 1e9));
  const start = process.hrtime.bigint();
  let verified = 0;
  let failures = 0;
  let elapsed = 0n;
  while (elapsed < budgetNs) {
    for (let k = 0; k < 256; k += 1) {
      const c = cases[verified % cases.length];
      if (!core.verifyEd25519(c.message, c.sig, c.pub)) failures += 1;
      verified += 1;
    }
    elapsed = process.hrtime.bigint() - start;
  }
  const seconds = Number(elapsed) / 1e9;
  if (failures > 0) throw new Error(`${failures} signatures did not verify`);
  process.send?.({ type: 'ready', perSecond: verified / seconds, verified, seconds, messageBytes, distinctMessages: cases.length }, () => process.disconnect());
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
  process.send?.({ type: 'error', message: error instanceof Error ? error.message : String(error) }, () => process.disconnect());
}
