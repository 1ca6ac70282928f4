/**
 * `govctl admin` and `govctl serve` on a PostgreSQL URL, against the run's throw-away cluster
 * (test/postgres-setup.ts): `--db URL` and DATABASE_URL (never taken for a file), the log key a
 * PostgreSQL database needs (--log-key or GOVCTL_LOG_KEY_FILE), the failures a user meets mapped
 * to their exit codes (unreachable 69, credentials refused 78, no such database 66, a newer schema
 * 78), and a password in the URL never printed: not in output, errors, or the start-up lines.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseVerifierKey } from '../../src/core/index.js';
import { runCli, runProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/cli-fixtures.js';
import { closedPort } from '../helpers/ports.js';
import { freshDatabase, startCluster, withClient, type PostgresCluster } from '../helpers/postgres.js';

const temp = tempDir();
const PASSWORD = 'Sup3r-s3cret-pw';

/** `url` with a user and password put in (the shared cluster trusts 127.0.0.1: the password is only carried). */
function withPassword(url: string, user = 'postgres', password = PASSWORD): string {
  const parsed = new URL(url);
  parsed.username = user;
  parsed.password = password;
  return parsed.toString();
}

let url: string;
const keyFile = join(temp.dir, 'ledger-key');

beforeAll(async () => {
  url = withPassword(await freshDatabase('admin_pg'));
});

afterAll(() => temp.remove());

const expectNoPassword = (...texts: string[]) => {
  for (const text of texts) expect(text).not.toContain(PASSWORD);
};

describe('govctl admin on a postgres:// URL', () => {
  let first: { workspace_id: string; api_key: string; ledger_key: string };

  it('init provisions the database and makes the --log-key file; the password is not printed', async () => {
    const init = await runCli(['admin', 'init', '--db', url, '--log-key', keyFile, '--json'], {});
    expect(init.exitCode, init.stderr).toBe(0);
    first = JSON.parse(init.stdout);
    expect(first.workspace_id).toMatch(/^ws_/);
    expect(first.ledger_key.startsWith(`govctl.local/ledger/${first.workspace_id}+`)).toBe(true);
    expect(existsSync(keyFile)).toBe(true);
    // nothing was made on disk for the URL
    expect(existsSync(join(temp.dir, 'postgres:'))).toBe(false);
    expectNoPassword(init.stdout, init.stderr);
    const rows = await withClient(url, (client) => client.query('SELECT workspace_id FROM workspaces'));
    expect(rows.rows.map((row) => row.workspace_id)).toEqual([first.workspace_id]);
  });

  it('takes the database from DATABASE_URL when --db is absent, and --db wins over it', async () => {
    const list = await runCli(['admin', 'api-key', 'list', '--json'], { env: { DATABASE_URL: url } });
    expect(list.exitCode, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).api_keys.map((key: { workspace_id: string }) => key.workspace_id)).toEqual([first.workspace_id]);

    const sqlite = join(temp.dir, 'other.db');
    expect((await runCli(['admin', 'init', '--db', sqlite, '--json'], { env: { DATABASE_URL: url } })).exitCode).toBe(0);
    const fromFlag = await runCli(['admin', 'api-key', 'list', '--db', sqlite, '--json'], { env: { DATABASE_URL: url } });
    expect(JSON.parse(fromFlag.stdout).api_keys.map((key: { workspace_id: string }) => key.workspace_id)).not.toContain(first.workspace_id);
  });

  it('needs --db or DATABASE_URL (64), and refuses a DATABASE_URL that is not a postgres:// URL (78) or a --db URL of another scheme (64)', async () => {
    const none = await runCli(['admin', 'api-key', 'list'], {});
    expect(none.exitCode).toBe(64);
    expect(none.stderr).toContain('--db');
    const file = await runCli(['admin', 'api-key', 'list'], { env: { DATABASE_URL: join(temp.dir, 'server.db') } });
    expect(file.exitCode).toBe(78);
    expect(file.stderr).toContain('DATABASE_URL');
    const mysql = await runCli(['admin', 'api-key', 'list', '--db', `mysql://root:${PASSWORD}@127.0.0.1/x`], { cwd: temp.dir });
    expect(mysql.exitCode).toBe(64);
    expectNoPassword(mysql.stderr);
    expect(existsSync(join(temp.dir, 'mysql:'))).toBe(false);
  });

  it('every admin command works on the URL: api-key create and revoke, gates, signing keys, witnesses', async () => {
    const ws = ['--workspace', first.workspace_id];
    const created = await runCli(['admin', 'api-key', 'create', '--db', url, ...ws, '--name', 'ci', '--json'], {});
    expect(created.exitCode, created.stderr).toBe(0);
    const revoked = await runCli(['admin', 'api-key', 'revoke', '--db', url, JSON.parse(created.stdout).key_id, '--json'], {});
    expect(JSON.parse(revoked.stdout).revoked).toBe(true);
    const gates = await runCli(['admin', 'gates', 'set', 'eu_ai_act', '--mode', 'required', '--threshold', '90', '--db', url, ...ws, '--json'], {});
    expect(gates.exitCode, gates.stderr).toBe(0);
    const key = await runCli(['admin', 'signing-key', 'add', '--db', url, ...ws, '--public-key', 'ab'.repeat(32), '--json'], {});
    expect(key.exitCode, key.stderr).toBe(0);
    const policy = await runCli(['admin', 'signing-key', 'policy', 'registered', '--db', url, ...ws, '--json'], {});
    expect(JSON.parse(policy.stdout).policy).toBe('registered');
    const witnesses = await runCli(['admin', 'witness', 'list', '--db', url, ...ws, '--json'], {});
    expect(witnesses.exitCode, witnesses.stderr).toBe(0);
    expectNoPassword(created.stderr, revoked.stdout, gates.stdout, key.stdout, policy.stdout, witnesses.stdout);
  });

  it('needs the log key file for a PostgreSQL database (78, saying how to make one); GOVCTL_LOG_KEY_FILE stands in for --log-key', async () => {
    const without = await runCli(['admin', 'init', '--db', url], {});
    expect(without.exitCode).toBe(78);
    expect(without.stderr).toContain('--log-key');
    expect(without.stderr).toContain('govctl admin ledger-key create --db URL --log-key FILE');
    expectNoPassword(without.stderr);
    const serve = await runCli(['serve', '--db', url, '--port', '0'], {});
    expect(serve.exitCode).toBe(78);
    expect(serve.stderr).toContain('--log-key');
    expectNoPassword(serve.stderr);

    // a key file that is not there: never made by serve for PostgreSQL (a second replica would make a second key)
    const missingKey = join(temp.dir, 'no-such-key');
    const serveMissing = await runCli(['serve', '--db', url, '--port', '0', '--log-key', missingKey], {});
    expect(serveMissing.exitCode).toBe(78);
    expect(serveMissing.stderr).toContain('give every replica the same file');
    expect(existsSync(missingKey)).toBe(false);

    // serve takes DATABASE_URL over its data-dir file when --db is absent: the PostgreSQL database, so the key is asked for
    const serveFromEnv = await runCli(['serve', '--port', '0'], { env: { DATABASE_URL: url } });
    expect(serveFromEnv.exitCode).toBe(78);
    expect(serveFromEnv.stderr).toContain('a PostgreSQL database needs the transparency log');
    expectNoPassword(serveFromEnv.stderr);

    const fromEnv = await runCli(['admin', 'init', '--db', url, '--json'], { env: { GOVCTL_LOG_KEY_FILE: keyFile } });
    expect(fromEnv.exitCode, fromEnv.stderr).toBe(0);
    // the same key file: each workspace's verifier key is named for its origin, the public key the same
    const publicKey = (vkey: string) => Buffer.from(parseVerifierKey(vkey).publicKey).toString('hex');
    expect(publicKey(JSON.parse(fromEnv.stdout).ledger_key)).toBe(publicKey(first.ledger_key));

    const made = join(temp.dir, 'second-key');
    const create = await runCli(['admin', 'ledger-key', 'create', '--db', url, '--log-key', made, '--json'], {});
    expect(create.exitCode, create.stderr).toBe(0);
    expect(JSON.parse(create.stdout).verifier_keys.length).toBe(2);
  });
});

describe('failures reaching PostgreSQL, as exit codes, never showing the password', () => {
  it('a closed port on 127.0.0.1 is 69 (unavailable)', async () => {
    const port = await closedPort();
    const result = await runCli(['admin', 'api-key', 'list', '--db', `postgres://govctl:${PASSWORD}@127.0.0.1:${port}/govctl`], {});
    expect(result.exitCode, result.stderr).toBe(69);
    expect(result.stderr).toContain(`postgres://govctl:***@127.0.0.1:${port}/govctl`);
    expect(result.stderr).toContain('ECONNREFUSED');
    expectNoPassword(result.stderr);
    const json = await runCli(['admin', 'init', '--db', `postgres://govctl:${PASSWORD}@127.0.0.1:${port}/govctl`, '--log-key', keyFile, '--json'], {});
    expect(json.exitCode).toBe(69);
    expect(JSON.parse(json.stderr)).toMatchObject({ error: 'database_unreachable', field: '--db' });
    expectNoPassword(json.stderr);
    // a password given as a query parameter is masked too
    const query = await runCli(['admin', 'api-key', 'list', '--db', `postgresql://govctl@127.0.0.1:${port}/govctl?sslmode=disable&password=${PASSWORD}`], {});
    expect(query.exitCode).toBe(69);
    expect(query.stderr).toContain(`postgresql://govctl@127.0.0.1:${port}/govctl?sslmode=***&password=***`);
    expectNoPassword(query.stderr);
  });

  it("an address that accepts the connection and never answers is 69 after the URL's connect_timeout, not a wait without end", async () => {
    // A listener that takes the TCP connection and says nothing, as a stuck server or a wrong port
    // would: pg applies no connect_timeout of its own, so without the store's the run never ended.
    const sockets: Socket[] = [];
    let closed = 0;
    const silent = createServer((socket) => {
      sockets.push(socket);
      socket.once('close', () => closed++);
      socket.resume(); // read (and drop) the startup message, so that the client's close is seen
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      const result = await runCli(['admin', 'api-key', 'list', '--db', `postgres://govctl:${PASSWORD}@127.0.0.1:${port}/govctl?connect_timeout=2`], {});
      expect(result.exitCode, result.stderr).toBe(69);
      expect(result.stderr).toContain('ETIMEDOUT');
      expect(result.stderr).toContain(`postgres://govctl:***@127.0.0.1:${port}/govctl?connect_timeout=***`);
      expectNoPassword(result.stderr);
      // the attempt's socket is closed, not left to the server
      expect(sockets.length).toBeGreaterThan(0);
      await expect.poll(() => closed).toBe(sockets.length);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  }, 20_000);

  it('TLS that the URL asks for and the server does not give, or a certificate not accepted, is 78 (configuration), not an internal error', async () => {
    // the shared cluster speaks no TLS: deploy.md's own sslmode=verify-full against it
    const noTls = new URL(url);
    noTls.searchParams.set('sslmode', 'verify-full');
    const refused = await runCli(['admin', 'api-key', 'list', '--db', noTls.toString()], {});
    expect(refused.exitCode, refused.stderr).toBe(78);
    expect(refused.stderr).toContain('does not accept TLS');
    expect(refused.stderr).toContain('sslmode=disable');
    expectNoPassword(refused.stderr);

    // a server that accepts TLS with a self-signed certificate the client has no CA for
    const dir = mkdtempSync(join(temp.dir, 'tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const key = readFileSync(join(dir, 'key.pem'));
    const cert = readFileSync(join(dir, 'cert.pem'));
    const sockets: Socket[] = [];
    const tlsServer = createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => {});
      // PostgreSQL's SSLRequest (8 bytes) is answered 'S', then the handshake starts
      socket.once('data', () => {
        socket.write('S');
        new TLSSocket(socket, { isServer: true, key, cert }).on('error', () => {});
      });
    });
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
    const { port } = tlsServer.address() as { port: number };
    try {
      const untrusted = await runCli(['admin', 'api-key', 'list', '--db', `postgres://govctl:${PASSWORD}@127.0.0.1:${port}/govctl?sslmode=verify-full`], {});
      expect(untrusted.exitCode, untrusted.stderr).toBe(78);
      expect(untrusted.stderr).toContain('TLS certificate');
      expect(untrusted.stderr).toContain('SELF_SIGNED');
      expect(untrusted.stderr).toContain('sslrootcert');
      expectNoPassword(untrusted.stderr);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => tlsServer.close(() => resolve()));
    }
  });

  it('a database that does not exist is 66', async () => {
    const missing = new URL(url);
    missing.pathname = '/no_such_database';
    const result = await runCli(['admin', 'api-key', 'list', '--db', missing.toString()], {});
    expect(result.exitCode, result.stderr).toBe(66);
    expect(result.stderr).toContain('does not exist');
    expectNoPassword(result.stderr);
  });

  it('a schema newer than this govctl is 78', async () => {
    const newer = withPassword(await freshDatabase('admin_pg_newer'));
    expect((await runCli(['admin', 'init', '--db', newer, '--log-key', keyFile], {})).exitCode).toBe(0);
    await withClient(newer, (client) => client.query("INSERT INTO schema_migrations (version, name, applied_ms) VALUES (999, 'from the future', 0)"));
    const result = await runCli(['admin', 'api-key', 'list', '--db', newer], {});
    expect(result.exitCode, result.stderr).toBe(78);
    expect(result.stderr).toContain('newer');
    expectNoPassword(result.stderr);
  });

  describe('on a cluster that checks passwords (scram-sha-256)', () => {
    let cluster: PostgresCluster;
    let hbaDir: string;

    beforeAll(async () => {
      // A cluster of its own: the shared one trusts every local connection, so no password is ever checked there.
      hbaDir = mkdtempSync(join(tmpdir(), 'govctl-hba-'));
      chmodSync(hbaDir, 0o755);
      const hba = join(hbaDir, 'pg_hba.conf');
      writeFileSync(hba, 'local all postgres trust\nhost all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n');
      chmodSync(hba, 0o644);
      // authentication_timeout at its maximum: a connection left half-authenticated holds a process for 10 minutes
      cluster = await startCluster({ settings: { hba_file: hba, authentication_timeout: '600s' } });
      await withClient(cluster.url(), async (client) => {
        await client.query("CREATE ROLE alice LOGIN PASSWORD 'the-right-one'");
        await client.query('CREATE DATABASE gov OWNER alice');
      });
    }, 60_000);

    afterAll(async () => {
      await cluster?.stop();
    });

    it("a password asked for and not in the URL ends the process with 78 at once, not after the server's authentication_timeout", async () => {
      // pg gives up on its side of the SCRAM exchange but left the socket open: the server held the
      // half-authenticated connection, and the process with it, until its authentication_timeout
      // (set to 10 minutes here); the process is killed after 30 s
      const spawned = await runProcess(['admin', 'api-key', 'list', '--db', `postgres://alice@127.0.0.1:${cluster.port}/gov`], { timeout: 30_000 });
      expect(spawned.exitCode, spawned.stderr).toBe(78);
      expect(spawned.stderr).toContain('refused the credentials');
    }, 45_000);

    it('a wrong password is 78 (credentials refused), the wrong password not shown', async () => {
      const wrong = `postgres://alice:${PASSWORD}@127.0.0.1:${cluster.port}/gov`;
      const result = await runCli(['admin', 'api-key', 'list', '--db', wrong], {});
      expect(result.exitCode, result.stderr).toBe(78);
      expect(result.stderr).toContain('password authentication failed');
      expect(result.stderr).toContain(`postgres://alice:***@127.0.0.1:${cluster.port}/gov`);
      expectNoPassword(result.stderr);
      // no password at all, where one is asked for: the same
      const none = await runCli(['admin', 'api-key', 'list', '--db', `postgres://alice@127.0.0.1:${cluster.port}/gov`], {});
      expect(none.exitCode, none.stderr).toBe(78);
      // and the right one works (the role owns the database, so it can make the schema)
      const right = await runCli(
        ['admin', 'init', '--db', `postgres://alice:the-right-one@127.0.0.1:${cluster.port}/gov`, '--log-key', join(hbaDir, 'key'), '--json'],
        {},
      );
      expect(right.exitCode, right.stderr).toBe(0);
      expect(right.stderr).not.toContain('the-right-one');
    });
  });
});
