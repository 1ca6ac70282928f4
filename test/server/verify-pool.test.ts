/**
 * The verify pool (its workers run the built dist/lib/verify-worker.js):
 * each signature's form, in order, the same as checking in the request thread, with small batches
 * kept in the thread.
 */
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO, ensureBuilt } from '../helpers/cli.js';
import { VerifyPool } from '../../src/server/verify-pool.js';
import { SigningKey, legacyWitnessMessage, signWitness, witnessMessage } from '../../src/core/signing/index.js';

/** A pool whose workers run the built worker (dist/lib/verify-worker.js). */
async function builtPool(size: number): Promise<VerifyPool | null> {
  await ensureBuilt();
  return VerifyPool.start(size, pathToFileURL(`${REPO}/dist/lib/verify-worker.js`));
}

/** `n` jobs: canonical, legacy and bad signatures in turn. */
function jobs(n: number) {
  const { key } = SigningKey.generate();
  const expected: (string | null)[] = [];
  const list = Array.from({ length: n }, (_, i) => {
    const attestation = {
      system_name: 's',
      tool_name: `t${i}`,
      input_hash: 'a'.repeat(64),
      output_hash: 'b'.repeat(64),
      executed_at: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.000Z`,
    };
    const canonical = witnessMessage(attestation, 'ws_1');
    const legacy = legacyWitnessMessage(attestation);
    const kind = i % 3;
    const signature =
      kind === 0 ? signWitness(attestation, 'ws_1', key).witness_sig : kind === 1 ? key.ed25519SignHex(legacy) : key.ed25519SignHex('something else');
    expected.push(kind === 0 ? 'canonical' : kind === 1 ? 'legacy' : null);
    return { canonical, legacy, signature, publicKey: key.publicKeyHex };
  });
  return { list, expected };
}

describe('the verify pool', () => {
  it('gives each signature its form, in order, for batches split across workers and small ones', async () => {
    const pool = await builtPool(2);
    expect(pool).not.toBeNull();
    try {
      expect(pool!.size).toBe(2);
      for (const n of [1, 7, 8, 9, 100, 301]) {
        const { list, expected } = jobs(n);
        expect(pool!.verify(list), `${n} jobs`).toEqual(expected);
      }
      // One batch after another on the same workers: no answer of one lands in the next.
      const batches = [jobs(50), jobs(64), jobs(33)];
      expect(batches.map((batch) => pool!.verify(batch.list))).toEqual(batches.map((batch) => batch.expected));
    } finally {
      await pool!.close();
    }
    // Closed: it still answers, in this thread.
    const { list, expected } = jobs(20);
    expect(pool!.verify(list)).toEqual(expected);
  });

  it('starts no workers for a size below 1', async () => {
    expect(await builtPool(0)).toBeNull();
  });
});
