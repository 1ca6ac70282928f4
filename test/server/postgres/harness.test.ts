/**
 * The PostgreSQL test harness itself: the shared cluster is durable, local-only and unprivileged;
 * each file's database is its own; a crashed cluster restarts with what it committed; a stopped
 * one leaves nothing behind, and one whose owner was killed is stopped; missing binaries fail loudly.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, inject, it } from 'vitest';
import { findBinDir, PostgresMissingError } from '../../helpers/postgres-cluster.mjs';
import { clusterUrl, freshDatabase, startCluster, withClient } from '../../helpers/postgres.js';

describe('the shared test cluster', () => {
  it('keeps fsync and synchronous_commit on and listens on 127.0.0.1 only', async () => {
    const settings = await withClient(clusterUrl(), async (client) => {
      const { rows } = await client.query(
        "SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync, current_setting('listen_addresses') AS listen",
      );
      return rows[0];
    });
    expect(settings).toEqual({ fsync: 'on', sync: 'on', listen: '127.0.0.1' });
    expect(new URL(clusterUrl()).hostname).toBe('127.0.0.1');
  });

  it('runs its server processes as an unprivileged user', async () => {
    // read while the connection (and so its backend process) is open
    const uid = await withClient(clusterUrl(), async (client) => {
      const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      return /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1];
    });
    expect(Number(uid)).not.toBe(0);
  });

  it('gives each caller a database of its own', async () => {
    const [a, b] = await Promise.all([freshDatabase('harness a'), freshDatabase('harness a')]);
    expect(a).not.toBe(b);
    await withClient(a, (client) => client.query('CREATE TABLE only_in_a (x int)'));
    const tables = await withClient(
      b,
      async (client) => (await client.query("SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'only_in_a'")).rows[0].n,
    );
    expect(tables).toBe(0);
  });
});

describe('a private cluster', () => {
  it('keeps a committed row across a SIGKILL of every server process, and leaves nothing once stopped', async () => {
    const cluster = await startCluster();
    try {
      const url = await cluster.createDatabase('crash');
      await withClient(url, async (client) => {
        await client.query('CREATE TABLE kept (x int)');
        await client.query('INSERT INTO kept VALUES (42)');
      });
      const pid = cluster.pid!;
      await cluster.kill('SIGKILL');
      expect(existsSync(`/proc/${pid}`)).toBe(false);
      await cluster.start();
      const rows = await withClient(url, async (client) => (await client.query('SELECT x FROM kept')).rows);
      expect(rows).toEqual([{ x: 42 }]);
      expect(cluster.log()).toMatch(/database system was interrupted|not properly shut down|automatic recovery/);
    } finally {
      const { dir, pid } = cluster;
      await cluster.stop();
      expect(existsSync(dir)).toBe(false);
      expect(pid === null || !existsSync(`/proc/${pid}`)).toBe(true);
    }
  });

  it('stops a cluster whose owner was killed without stopping it (the watchdog)', { timeout: 30_000 }, async () => {
    // a process that starts a cluster and waits, standing for a benchmark or a test run
    const script = `const { startCluster } = await import(${JSON.stringify(new URL('../../helpers/postgres-cluster.mjs', import.meta.url).href)});
      const cluster = await startCluster({ pristine: ${JSON.stringify(inject('postgresPristine'))} });
      process.stdout.write(JSON.stringify({ pid: cluster.pid, dir: cluster.dir }) + '\\n');
      setInterval(() => {}, 1000);`;
    const owner = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [line] = (await once(createInterface({ input: owner.stdout }), 'line')) as [string];
    const { pid, dir } = JSON.parse(line) as { pid: number; dir: string };
    try {
      expect(existsSync(`/proc/${pid}`)).toBe(true);
      owner.kill('SIGKILL');
      // the watchdog looks every 0.5 s and gives the server 5 s before SIGKILL: bounded here at 20 s
      const deadline = Date.now() + 20_000;
      while (existsSync(`/proc/${pid}`) && Date.now() < deadline) await new Promise((done) => setTimeout(done, 100));
      expect(existsSync(`/proc/${pid}`)).toBe(false);
    } finally {
      owner.kill('SIGKILL');
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone, as expected
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails naming what to install when the PostgreSQL binaries are missing', () => {
    const empty = mkdtempSync(join(tmpdir(), 'govctl-no-pg-'));
    expect(() => findBinDir({ GOVCTL_PG_BIN: empty })).toThrow(PostgresMissingError);
    expect(() => findBinDir({ GOVCTL_PG_BIN: empty })).toThrow(/apt-get install postgresql-15/);
  });
});
