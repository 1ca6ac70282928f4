#!/usr/bin/env node
// @ts-check
/**
 * Which PostgreSQL driver the store's PostgreSQL backend uses: `pg` (node-postgres) against
 * `postgres` (postgres.js), measured in the same run on one throw-away cluster
 * (test/helpers/postgres-cluster.mjs; fsync and synchronous_commit on).
 *
 *   node bench/pg-driver.mjs [--n N] [--rounds R]
 *
 * Per driver, N round trips of each shape the store uses most, in R interleaved rounds (the
 * drivers alternate, so load on the machine falls on both):
 *   - write: BEGIN; INSERT one row (a text and a bytea column) RETURNING its identity; COMMIT
 *     (what one group commit of one record is, minus the record's other statements);
 *   - group10: ten such inserts in one transaction (a group commit of ten records), N rows in all;
 *   - read: a point read by primary key with a parameter (an API key by its hash, a record by id);
 *   - read x8: the same point read, 8 in flight on 8 pooled connections (a busy replica).
 * Prints each rate and the ratio postgres/pg (above 1: postgres.js is faster); figures only, no target.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import postgres from 'postgres';
import { startCluster } from '../test/helpers/postgres-cluster.mjs';

const { values } = parseArgs({ options: { n: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '3' } } });
const N = Number(values.n);
const ROUNDS = Number(values.rounds);

const cluster = await startCluster();
try {
  const url = await cluster.createDatabase('driver_bench');
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  await setup.query('CREATE TABLE t (seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, id text NOT NULL UNIQUE, h bytea NOT NULL)');
  await setup.query("INSERT INTO t (id, h) SELECT 'k' || g, sha256(('k' || g)::bytea) FROM generate_series(1, 10000) g");
  await setup.end();

  const pool = new pg.Pool({ connectionString: url, max: 8 });
  const sql = postgres(url, { max: 8, onnotice: () => {} });
  /**
   * @typedef {object} Driver
   * @property {(id: string, h: Buffer) => Promise<unknown>} write one row in a transaction
   * @property {(ids: string[], hs: Buffer[]) => Promise<unknown>} group rows in one transaction
   * @property {(id: string) => Promise<unknown>} read
   */
  /** @type {Record<'pg' | 'postgres', Driver>} */
  const drivers = {
    pg: {
      async write(id, h) {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          await client.query({ name: 'ins', text: 'INSERT INTO t (id, h) VALUES ($1, $2) RETURNING seq', values: [id, h] });
          await client.query('COMMIT');
        } finally {
          client.release();
        }
      },
      async group(ids, hs) {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          for (let i = 0; i < ids.length; i++)
            await client.query({ name: 'ins', text: 'INSERT INTO t (id, h) VALUES ($1, $2) RETURNING seq', values: [ids[i], hs[i]] });
          await client.query('COMMIT');
        } finally {
          client.release();
        }
      },
      read: (id) => pool.query({ name: 'get', text: 'SELECT seq, id, h FROM t WHERE id = $1', values: [id] }),
    },
    postgres: {
      write: (id, h) => sql.begin((tx) => tx`INSERT INTO t (id, h) VALUES (${id}, ${h}) RETURNING seq`),
      // postgres.js pipelines the statements of a transaction that are not awaited one by one
      group: (ids, hs) => sql.begin((tx) => ids.map((id, i) => tx`INSERT INTO t (id, h) VALUES (${id}, ${hs[i]}) RETURNING seq`)),
      read: (id) => sql`SELECT seq, id, h FROM t WHERE id = ${id}`,
    },
  };
  const totals = { pg: { write: 0, group10: 0, read: 0, read8: 0 }, postgres: { write: 0, group10: 0, read: 0, read8: 0 } };
  const key = () => `k${1 + Math.floor(Math.random() * 10000)}`;
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of /** @type {('pg' | 'postgres')[]} */ (round % 2 === 0 ? ['pg', 'postgres'] : ['postgres', 'pg'])) {
      const driver = drivers[name];
      for (let i = 0; i < 50; i++) await driver.read(key()); // warm-up: connections, prepared statements
      let start = performance.now();
      for (let i = 0; i < N; i++) await driver.write(`${name}-${round}-${i}`, randomBytes(32));
      totals[name].write += performance.now() - start;
      start = performance.now();
      for (let i = 0; i < N / 10; i++) {
        const ids = Array.from({ length: 10 }, (_, j) => `${name}-${round}-g${i}-${j}`);
        await driver.group(
          ids,
          ids.map(() => randomBytes(32)),
        );
      }
      totals[name].group10 += performance.now() - start;
      start = performance.now();
      for (let i = 0; i < N; i++) await driver.read(key());
      totals[name].read += performance.now() - start;
      start = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next++ < N) await driver.read(key());
        }),
      );
      totals[name].read8 += performance.now() - start;
      process.stderr.write(`round ${round + 1}/${ROUNDS} ${name} done\n`);
    }
  }
  await pool.end();
  await sql.end();
  // rows (group10: rows, 10 per transaction) or reads per second
  const rate = (/** @type {number} */ ms) => Math.round((N * ROUNDS) / (ms / 1000));
  /** @type {Record<string, { pg: number, postgres: number, ratio: number }>} */
  const result = {};
  for (const shape of /** @type {const} */ (['write', 'group10', 'read', 'read8'])) {
    const a = rate(totals.pg[shape]);
    const b = rate(totals.postgres[shape]);
    result[shape] = { pg: a, postgres: b, ratio: Number((b / a).toFixed(2)) };
    console.log(`${shape}: pg ${a}/s, postgres ${b}/s (ratio postgres/pg ${(b / a).toFixed(2)})`);
  }
  console.log(JSON.stringify({ n: N, rounds: ROUNDS, result }));
} finally {
  await cluster.stop();
}
