/**
 * `govctl admin` end to end on real database files, with a real service over the same file: init
 * (and init again), API keys created, listed (never the key) and revoked (the CLI with a revoked
 * key exits 77), and the gate policy set and shown.
 */
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/cli-fixtures.js';

const temp = tempDir();
const db = join(temp.dir, 'server.db');
let first: { org_id: string; workspace_id: string; user_id: string; api_key: string };
let server: TestServer;

beforeAll(async () => {
  const init = await runCli(['admin', 'init', '--db', db, '--json'], {});
  if (init.exitCode !== 0) throw new Error(`admin init failed: ${init.stderr}`);
  first = JSON.parse(init.stdout);
  // The service over the same file (the helper provisions one more organisation of its own).
  server = await startTestServer({ dbPath: db });
});

afterAll(async () => {
  await server?.stop();
  temp.remove();
});

const asKey = (apiKey: string, ...args: string[]) => runCli(args, { env: { SERVICE_BASE_URL: server.url, SERVICE_API_KEY: apiKey } });

describe('govctl admin init', () => {
  it('prints {org_id, workspace_id, user_id, api_key, ledger_key} with --json, and the key works', async () => {
    expect(Object.keys(first).sort()).toEqual(['api_key', 'ledger_key', 'org_id', 'user_id', 'workspace_id']);
    expect(first.org_id).toMatch(/^org_/);
    expect(first.workspace_id).toMatch(/^ws_/);
    expect(first.user_id).toMatch(/^usr_/);
    expect(first.api_key).toMatch(/^gk_/);
    expect(statSync(db).mode & 0o777).toBe(0o600);
    const me = await asKey(first.api_key, 'whoami', '--json');
    expect(me.exitCode, me.stderr).toBe(0);
    expect(JSON.parse(me.stdout)).toEqual({ user_id: first.user_id, workspace_id: first.workspace_id, org_id: first.org_id });
  });

  it('adds another organisation and workspace when run again on the same file', async () => {
    const again = await runCli(['admin', 'init', '--db', db, '--org-name', 'Acme', '--json'], {});
    expect(again.exitCode, again.stderr).toBe(0);
    const second = JSON.parse(again.stdout);
    expect(second.workspace_id).not.toBe(first.workspace_id);
    expect(second.org_id).not.toBe(first.org_id);
    const me = await asKey(second.api_key, 'whoami', '--json');
    expect(JSON.parse(me.stdout).workspace_id).toBe(second.workspace_id);
    const list = await runCli(['admin', 'api-key', 'list', '--db', db, '--json'], {});
    const workspaces = new Set(JSON.parse(list.stdout).api_keys.map((key: { workspace_id: string }) => key.workspace_id));
    expect(workspaces.has(first.workspace_id) && workspaces.has(second.workspace_id)).toBe(true);
  });

  it('prints name<TAB>value lines when piped', async () => {
    const piped = await runCli(['admin', 'init', '--db', db], {});
    expect(piped.exitCode).toBe(0);
    expect(
      piped.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split('\t')[0]),
    ).toEqual(['org_id', 'workspace_id', 'user_id', 'api_key', 'ledger_key']);
  });
});

describe('govctl admin api-key', () => {
  it('creates a key shown once, lists keys without them, and a revoked key makes the CLI exit 77', async () => {
    const create = await runCli(
      ['admin', 'api-key', 'create', '--db', db, '--workspace', first.workspace_id, '--name', 'ci', '--expires-in', '90d', '--json'],
      {},
    );
    expect(create.exitCode, create.stderr).toBe(0);
    const created = JSON.parse(create.stdout);
    expect(created).toMatchObject({ workspace_id: first.workspace_id, name: 'ci', revoked: false, role: 'writer' });
    const days = (Date.parse(created.expires_at) - Date.parse(created.created_at)) / 86_400_000;
    expect(Math.round(days)).toBe(90);

    const list = await runCli(['admin', 'api-key', 'list', '--db', db, '--workspace', first.workspace_id], {});
    expect(list.exitCode).toBe(0);
    expect(list.stdout).toContain(created.key_id);
    expect(list.stdout).not.toContain(created.api_key);
    expect(list.stdout).not.toContain(first.api_key);
    const listJson = await runCli(['admin', 'api-key', 'list', '--db', db, '--json'], {});
    expect(listJson.stdout).not.toContain(created.api_key);

    expect((await asKey(created.api_key, 'posture')).exitCode).toBe(0);
    const revoke = await runCli(['admin', 'api-key', 'revoke', created.key_id, '--db', db, '--json'], {});
    expect(revoke.exitCode, revoke.stderr).toBe(0);
    expect(JSON.parse(revoke.stdout)).toMatchObject({ key_id: created.key_id, revoked: true });

    for (const command of [['posture'], ['gates', 'check'], ['whoami']]) {
      const refused = await asKey(created.api_key, ...command);
      expect(refused.exitCode).toBe(77);
      expect(refused.stdout).toBe('');
    }
    // The first key still works.
    expect((await asKey(first.api_key, 'posture')).exitCode).toBe(0);
  });

  it('creates a key with a role, listed with it; a reader key reads', async () => {
    const create = await runCli(['admin', 'api-key', 'create', '--db', db, '--workspace', first.workspace_id, '--role', 'reader', '--json'], {});
    expect(create.exitCode, create.stderr).toBe(0);
    const reader = JSON.parse(create.stdout);
    expect(reader.role).toBe('reader');
    const list = await runCli(['admin', 'api-key', 'list', '--db', db, '--workspace', first.workspace_id], {});
    expect(
      list.stdout
        .split('\n')
        .find((line) => line.startsWith(reader.key_id))
        ?.split('\t')
        .at(-1),
    ).toBe('reader');
    expect((await asKey(reader.api_key, 'posture')).exitCode).toBe(0);
    expect((await runCli(['admin', 'api-key', 'create', '--db', db, '--workspace', first.workspace_id, '--role', 'owner'], {})).exitCode).toBe(64);
  });

  it('fails with 66 for a missing database, 65 for an unknown key or workspace, 64 without --workspace', async () => {
    expect((await runCli(['admin', 'api-key', 'list', '--db', join(temp.dir, 'nope.db')], {})).exitCode).toBe(66);
    const unknownKey = await runCli(['admin', 'api-key', 'revoke', 'key_nope', '--db', db, '--json'], {});
    expect(unknownKey.exitCode).toBe(65);
    expect(JSON.parse(unknownKey.stderr).error).toBe('not_found');
    expect((await runCli(['admin', 'api-key', 'create', '--db', db, '--workspace', 'ws_nope'], {})).exitCode).toBe(65);
    expect((await runCli(['admin', 'api-key', 'create', '--db', db], {})).exitCode).toBe(64);
    expect((await runCli(['admin', 'api-key', 'create', '--db', db, '--workspace', first.workspace_id, '--expires-in', 'soon'], {})).exitCode).toBe(64);
    const notADb = join(temp.dir, 'text.db');
    writeFileSync(notADb, 'this is not a database, just text that is long enough to be read as a header'.repeat(10));
    expect((await runCli(['admin', 'api-key', 'list', '--db', notADb], {})).exitCode).toBe(65);
  });

  it('serve and ledger-key create refuse a file that is not a database (65) before looking for or writing its log key', async () => {
    const notADb = join(temp.dir, 'notes.txt');
    writeFileSync(notADb, 'meeting notes, not a database\n');
    const serve = await runCli(['serve', '--db', notADb, '--port', '0', '--json'], {});
    expect(serve.exitCode).toBe(65);
    expect(JSON.parse(serve.stderr)).toMatchObject({ error: 'invalid_database', field: '--db' });
    expect(serve.stderr).not.toContain('ledger-key');
    const create = await runCli(['admin', 'ledger-key', 'create', '--db', notADb], {});
    expect(create.exitCode).toBe(65);
    expect(existsSync(`${notADb}.ledger-key`)).toBe(false);
  });
});

describe('govctl admin gates', () => {
  it('sets one framework and shows the whole policy, defaults marked', async () => {
    const set = await runCli(
      ['admin', 'gates', 'set', 'soc2_type2', '--mode', 'required', '--threshold', '60', '--db', db, '--workspace', first.workspace_id, '--json'],
      {},
    );
    expect(set.exitCode, set.stderr).toBe(0);
    const show = await runCli(['admin', 'gates', 'show', '--db', db, '--workspace', first.workspace_id], {});
    expect(show.exitCode).toBe(0);
    expect(show.stdout.trimEnd().split('\n')).toEqual([
      'eu_ai_act\trequired\t80\tdefault',
      'iso_42001\tadvisory\t70\tdefault',
      'soc2_type2\trequired\t60\tworkspace',
      'iso_27001\tadvisory\t70\tdefault',
      'nist_airf\tadvisory\t70\tdefault',
    ]);
    expect(JSON.parse(set.stdout)).toEqual({ workspace_id: first.workspace_id, gates: expect.any(Array) });
    // The service sees it: SOC 2 is now a blocking gate.
    const gates = await asKey(first.api_key, 'gates', 'check', '--json');
    const soc2 = JSON.parse(gates.stdout).gates.find((gate: { gate_id: string }) => gate.gate_id === 'gate_soc2_type2');
    expect(soc2).toMatchObject({ blocking: true, exit_code: 2 });
  });

  it('unsets a framework; each change is logged with who made it (--by, else $USER)', async () => {
    const by = await runCli(
      ['admin', 'gates', 'set', 'nist_airf', '--threshold', '50', '--by', 'alice@example.com', '--db', db, '--workspace', first.workspace_id],
      {},
    );
    expect(by.exitCode, by.stderr).toBe(0);
    const unset = await runCli(['admin', 'gates', 'unset', 'nist_airf', '--db', db, '--workspace', first.workspace_id], { env: { USER: 'bob' } });
    expect(unset.exitCode, unset.stderr).toBe(0);
    expect(unset.stdout).toContain('nist_airf\tadvisory\t70\tdefault');
    const { gatePolicyChanges } = await import('../../src/server/index.js');
    const changes = await gatePolicyChanges(db, { workspaceId: first.workspace_id });
    expect(changes.slice(-2).map((change) => [change.action, change.framework, change.changed_by])).toEqual([
      ['set', 'nist_airf', 'alice@example.com'],
      ['unset', 'nist_airf', 'bob'],
    ]);
  });

  it('refuses a threshold outside 0–100, an unknown framework or mode, and a set without changes', async () => {
    const base = ['--db', db, '--workspace', first.workspace_id];
    expect((await runCli(['admin', 'gates', 'set', 'eu_ai_act', '--threshold', '101', ...base], {})).exitCode).toBe(64);
    expect((await runCli(['admin', 'gates', 'set', 'gdpr', '--threshold', '50', ...base], {})).exitCode).toBe(64);
    expect((await runCli(['admin', 'gates', 'set', 'eu_ai_act', '--mode', 'strict', ...base], {})).exitCode).toBe(64);
    expect((await runCli(['admin', 'gates', 'set', 'eu_ai_act', ...base], {})).exitCode).toBe(64);
  });
});
