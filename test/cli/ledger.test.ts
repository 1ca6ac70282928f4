/**
 * `govctl ledger` against a real service on 127.0.0.1 over a real database file, and the tamper
 * cases of issue 12 done to that file: a changed member, a deleted record, an altered log, a
 * rollback to an older copy, a fork into two copies, a signature by another key, a missing
 * witness — each must exit 2 and name the problem.
 */
import { copyFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { CosignatureSigner, SigningKey } from '../../src/core/index.js';
import { main } from '../../src/cli/main.js';
import { createMemoryIO } from '../../src/cli/io.js';
import { addWitness, createLedgerKey, ledgerKeyPath, provision } from '../../src/server/index.js';
import { ledgerServices, logKey, type LedgerService } from '../helpers/ledger-services.js';
import { attestation, call, evidenceRecord, wsPath } from '../helpers/service-requests.js';
import { sqliteOf } from '../helpers/sqlite-store.js';

type Service = LedgerService;

const { tempDir, serve, newService, stop, govctl } = ledgerServices('govctl-ledger-cli');

async function write(service: Service, n = 1, kind: 'evidence' | 'attestation' = 'evidence'): Promise<string[]> {
  const ids = [];
  for (let i = 0; i < n; i++) {
    if (kind === 'evidence') {
      const reply = await call(service, 'POST', wsPath(service.workspaceId, 'grc/evidence'), {
        body: evidenceRecord('change_event', { identity: 'alice@example.com', resource: 'github.com/acme/app', environment: 'production' }),
      });
      ids.push(reply.json.record_id as string);
    } else ids.push((await call(service, 'POST', wsPath(service.workspaceId, 'attestations/external'), { body: attestation() })).json.attestation_id as string);
  }
  await service.server.service.store.ledger.integrate();
  return ids;
}

function tamper(dbPath: string, sql: string, ...params: unknown[]): void {
  const db = new Database(dbPath);
  try {
    expect(db.prepare(sql).run(...params).changes).toBeGreaterThan(0);
  } finally {
    db.close();
  }
}

describe('govctl ledger prove', () => {
  it('proves evidence and attestations exactly as the service returns them (exit 0)', async () => {
    const service = await newService();
    const [rec] = await write(service);
    const [att] = await write(service, 1, 'attestation');
    const env = { GOVCTL_LEDGER_KEY: await logKey(service) };
    const proved = await govctl(service, ['ledger', 'prove', rec, '--json'], env);
    expect(proved.stderr).toBe('');
    expect(proved.code).toBe(0);
    // leaf 0 is the workspace's default gate policy (docs/ledger.md, "Gate policy changes")
    expect(JSON.parse(proved.stdout)).toMatchObject({ id: rec, kind: 'evidence', leaf_index: 1, tree_size: 3, verified: true });
    const attested = await govctl(service, ['ledger', 'prove', att], env);
    expect(attested.code).toBe(0);
    expect(attested.stdout).toMatch(/kind\tattestation\nleaf_index\t2\ntree_size\t3\n/);
  });

  it('needs a pinned log key (78)', async () => {
    const service = await newService();
    const [rec] = await write(service);
    const result = await govctl(service, ['ledger', 'prove', rec]);
    expect(result.code).toBe(78);
    expect(result.stderr).toMatch(/no log key is pinned/);
  });

  for (const [member, sql] of [
    ['identity', "UPDATE evidence SET identity = 'mallory@example.com' WHERE record_id = ?"],
    ['resource', "UPDATE evidence SET resource = 'elsewhere' WHERE record_id = ?"],
    ['environment', "UPDATE evidence SET environment = 'staging' WHERE record_id = ?"],
    ['mapped_controls', 'UPDATE evidence SET mapped_controls = \'["SOC2_CC8_1","EUAIA_ART9"]\' WHERE record_id = ?'],
    ['source', "UPDATE evidence SET source = 'import' WHERE record_id = ?"],
    ['payload', "UPDATE evidence SET payload = replace(payload, '}', ',\"x\":1}') WHERE record_id = ?"],
    ['occurred_at', "UPDATE evidence SET occurred_at = '2020-01-01T00:00:00.000Z' WHERE record_id = ?"],
  ] as const) {
    it(`exits 2 when a record's ${member} was changed in the database`, async () => {
      const service = await newService();
      const [rec] = await write(service);
      const env = { GOVCTL_LEDGER_KEY: await logKey(service) };
      tamper(service.dbPath, sql, rec);
      const result = await govctl(service, ['ledger', 'prove', rec], env);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/is not what the log committed to at leaf 1 .*the stored record was changed/);
    });
  }

  it("exits 2 when an attestation's trust tier was changed in the database", async () => {
    const service = await newService();
    const [att] = await write(service, 1, 'attestation');
    tamper(service.dbPath, "UPDATE attestations SET trust_tier = 'witnessed' WHERE attestation_id = ?", att);
    const result = await govctl(service, ['ledger', 'prove', att], { GOVCTL_LEDGER_KEY: await logKey(service) });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/attestation att_\S+ as the service returns it is not what the log committed to/);
  });

  it('exits 2 when a record was deleted from the database', async () => {
    const service = await newService();
    const [rec] = await write(service, 2);
    tamper(service.dbPath, 'DELETE FROM evidence WHERE record_id = ?', rec);
    const result = await govctl(service, ['ledger', 'prove', rec], { GOVCTL_LEDGER_KEY: await logKey(service) });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no longer returns evidence rec_\S+, which the log holds at leaf 1: the record was deleted/);
  });

  it('exits 2 when the log entry was rewritten to match a changed record', async () => {
    const service = await newService();
    const [rec] = await write(service, 3);
    const body = (await call(service, 'GET', wsPath(service.workspaceId, `grc/evidence/${rec}`))).text;
    tamper(service.dbPath, "UPDATE evidence SET environment = 'staging' WHERE record_id = ?", rec);
    const changed = (await call(service, 'GET', wsPath(service.workspaceId, `grc/evidence/${rec}`))).text;
    expect(changed).not.toBe(body);
    const { sha256Hex, canonicalize, parseJsonLossless } = await import('../../src/core/index.js');
    const db = new Database(service.dbPath);
    const entry = (db.prepare('SELECT entry FROM ledger_leaves WHERE record_id = ?').pluck().get(rec) as Buffer).toString();
    const forged = entry.replace(/"sha256":"[0-9a-f]+"/, `"sha256":"${sha256Hex(canonicalize(parseJsonLossless(changed)))}"`);
    db.prepare('UPDATE ledger_leaves SET entry = ? WHERE record_id = ?').run(Buffer.from(forged), rec);
    db.close();
    const result = await govctl(service, ['ledger', 'prove', rec], { GOVCTL_LEDGER_KEY: await logKey(service) });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/inclusion proof of rec_\S+ \(leaf 1\) does not lead to the root of the signed checkpoint at size 4/);
  });
});

describe('govctl ledger verify --state', () => {
  it('keeps the first checkpoint, then accepts only a log that grew consistently', async () => {
    const service = await newService();
    await write(service, 3);
    const state = join(service.dir, 'state.json');
    const first = await govctl(service, ['ledger', 'verify', '--state', state, '--json']);
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(/pinned the log key govctl\.local\/ledger\/\S+ in/);
    // the records' leaves after the workspace's first, its default gate policy
    expect(JSON.parse(first.stdout)).toMatchObject({ tree_size: 4, previous_size: null, verified: true });
    await write(service, 2);
    const second = await govctl(service, ['ledger', 'verify', '--state', state, '--json']);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ tree_size: 6, previous_size: 4 });
    expect(JSON.parse(readFileSync(state, 'utf8')).checkpoint.split('\n')[1]).toBe('6');
  });

  it('exits 2 when the database was rolled back to an older copy, and keeps the state it had', async () => {
    const service = await newService();
    await write(service, 3);
    const copy = join(service.dir, 'old.db');
    await sqliteOf(service.server.service.store).db.backup(copy);
    await write(service, 2);
    const state = join(service.dir, 'state.json');
    expect((await govctl(service, ['ledger', 'verify', '--state', state])).code).toBe(0);
    const kept = readFileSync(state, 'utf8');
    await stop(service);
    copyFileSync(copy, service.dbPath);
    rmSync(`${service.dbPath}-wal`, { force: true });
    rmSync(`${service.dbPath}-shm`, { force: true });
    const rolledBack = await serve(service.dbPath, service.identity);
    const result = await govctl(rolledBack, ['ledger', 'verify', '--state', state]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/the log shrank from 6 to 4 leaves: records were removed or the database was rolled back/);
    expect(readFileSync(state, 'utf8')).toBe(kept);
  });

  it('exits 2 when the database was forked into two copies that received different writes', async () => {
    const service = await newService();
    await write(service, 2);
    const forkPath = join(service.dir, 'fork.db');
    await sqliteOf(service.server.service.store).db.backup(forkPath);
    copyFileSync(ledgerKeyPath(service.dbPath), ledgerKeyPath(forkPath));
    const fork = await serve(forkPath, service.identity);
    await write(service, 1);
    await write(fork, 1);
    await write(fork, 1);
    const state = join(service.dir, 'state.json');
    expect((await govctl(service, ['ledger', 'verify', '--state', state])).code).toBe(0);
    const sameSize = join(service.dir, 'state-same.json');
    copyFileSync(state, sameSize);
    await write(service, 1); // both copies now hold 5 leaves, with different fourth and fifth ones
    const growing = await govctl(fork, ['ledger', 'verify', '--state', state]);
    expect(growing.code).toBe(2);
    expect(growing.stderr).toMatch(/the tree of size 5 does not extend the one of size 4: the log's history was rewritten .* or it forked/);
    const forked = await govctl(fork, ['ledger', 'verify', '--state', join(service.dir, 'state2.json')]);
    expect(forked.code).toBe(0);
    const other = await govctl(service, ['ledger', 'verify', '--state', join(service.dir, 'state2.json')]);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/two different roots for the same size 5: the log forked/);
  });

  it('exits 2 when the checkpoint is signed by another key than the pinned one', async () => {
    const service = await newService();
    await write(service, 2);
    const state = join(service.dir, 'state.json');
    const pinned = await logKey(service);
    expect((await govctl(service, ['ledger', 'verify', '--state', state])).code).toBe(0);
    await stop(service);
    const otherKey = join(service.dir, 'other.key');
    createLedgerKey(otherKey);
    const impostor = await serve(service.dbPath, service.identity, otherKey);
    const result = await govctl(impostor, ['ledger', 'verify', '--state', state]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/checkpoint does not verify with the pinned log key/);
    const checkpoint = await govctl(impostor, ['ledger', 'checkpoint'], { GOVCTL_LEDGER_KEY: pinned });
    expect(checkpoint.code).toBe(2);
    // A different pinned key than the state file's is refused, not silently replaced.
    const repinned = await govctl(impostor, ['ledger', 'verify', '--state', state, '--ledger-key', await logKey(impostor)]);
    expect(repinned.code).toBe(2);
    expect(repinned.stderr).toMatch(/was pinned to another log key/);
  });

  it('exits 2 without the cosignature of a required witness, and 0 once the witness cosigned', async () => {
    const service = await newService();
    await write(service, 2);
    const witness = new CosignatureSigner('witness.example/w1', SigningKey.fromHex('55'.repeat(32)), () => 1_763_888_400);
    const state = join(service.dir, 'state.json');
    const missing = await govctl(service, ['ledger', 'verify', '--state', state, '--witness', witness.verifierKey]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/has no cosignature by witness\.example\/w1/);
    await addWitness(service.dbPath, { workspaceId: service.workspaceId, key: witness.verifierKey });
    const note = (await call(service, 'GET', wsPath(service.workspaceId, 'ledger/checkpoint'))).text;
    const body = note.slice(0, note.indexOf('\n\n') + 1);
    expect(
      (await call(service, 'POST', wsPath(service.workspaceId, 'ledger/cosignatures'), { body: { checkpoint: note + witness.cosign(body) } })).status,
    ).toBe(201);
    const cosigned = await govctl(service, ['ledger', 'verify', '--state', state, '--witness', witness.verifierKey, '--json']);
    expect(cosigned.code).toBe(0);
    expect(JSON.parse(cosigned.stdout).cosigned_by).toEqual(['witness.example/w1']);
  });
});

describe('govctl ledger key and checkpoint', () => {
  it('prints the key, and the checkpoint verified with the pinned key', async () => {
    const service = await newService();
    await write(service, 1);
    const key = await govctl(service, ['ledger', 'key']);
    expect(key.code).toBe(0);
    expect(key.stdout.trim()).toBe(await logKey(service));
    const checkpoint = await govctl(service, ['ledger', 'checkpoint', '--json'], { GOVCTL_LEDGER_KEY: key.stdout.trim() });
    expect(checkpoint.code).toBe(0);
    expect(JSON.parse(checkpoint.stdout)).toMatchObject({ origin: `govctl.local/ledger/${service.workspaceId}`, tree_size: 2 });
    const malformed = await govctl(service, ['ledger', 'checkpoint'], { GOVCTL_LEDGER_KEY: 'not-a-key' });
    expect(malformed.code).toBe(78);
  });
});

describe('the embedded store', () => {
  it('integrates before a ledger read, so a record written a moment ago is provable at once', async () => {
    const home = tempDir();
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, 'c'), XDG_DATA_HOME: join(home, 'd'), SERVICE_BASE_URL: 'local' };
    const run = async (args: string[], extra: Record<string, string> = {}) => {
      const io = createMemoryIO();
      const code = await main(args, { io, env: { ...env, ...extra }, cwd: home });
      return { code, stdout: io.stdoutText(), stderr: io.stderrText() };
    };
    const added = await run([
      'evidence',
      'add',
      'ai_risk_assessment',
      '--system',
      'local-sys',
      '--json',
      '--risk-level',
      'high',
      '--risk-summary',
      'Scores loans',
      '--intended-purpose',
      'Assist underwriters',
      '--impact-domain',
      'credit',
      '--art5-self-assessment',
      '--annex-iii-category',
      'essential_services',
      '--assessor',
      'alice@example.com',
    ]);
    expect(added.code, added.stderr).toBe(0);
    const id = JSON.parse(added.stdout).record_id as string;
    expect(JSON.parse(added.stdout).ledger_index).toBe(1); // after the workspace's default gate policy
    const key = (await run(['ledger', 'key'])).stdout.trim();
    const proved = await run(['ledger', 'prove', id, '--json'], { GOVCTL_LEDGER_KEY: key });
    expect(proved.code, proved.stderr).toBe(0);
    expect(JSON.parse(proved.stdout)).toMatchObject({ id, leaf_index: 1, tree_size: 2, verified: true });
  });

  it('audits the embedded store in bulk, with progress on a terminal and none when piped', async () => {
    const home = tempDir();
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, 'c'), XDG_DATA_HOME: join(home, 'd'), SERVICE_BASE_URL: 'local' };
    const run = async (args: string[], extra: Record<string, string> = {}, tty = false) => {
      const io = createMemoryIO({ stderrIsTTY: tty });
      const code = await main(args, { io, env: { ...env, ...extra }, cwd: home });
      return { code, stdout: io.stdoutText(), stderr: io.stderrText() };
    };
    for (const system of ['a', 'b', 'c']) {
      const added = await run([
        'evidence',
        'add',
        'change_event',
        '--system',
        system,
        '--json',
        '--type',
        'deployment',
        '--by',
        'ci@example.com',
        '--description',
        'v2',
        '--environment',
        'production',
      ]);
      expect(added.code, added.stderr).toBe(0);
    }
    const key = (await run(['ledger', 'key'])).stdout.trim();
    const piped = await run(['ledger', 'audit', '--json'], { GOVCTL_LEDGER_KEY: key });
    expect(piped.code, piped.stderr).toBe(0);
    expect(JSON.parse(piped.stdout)).toMatchObject({ tree_size: 3, evidence: 3, problems: [] });
    expect(piped.stderr).toBe('');
    const terminal = await run(['ledger', 'audit'], { GOVCTL_LEDGER_KEY: key }, true);
    expect(terminal.code, terminal.stderr).toBe(0);
    expect(terminal.stderr).toMatch(/auditing 3 \| of 3 records checked/);
  });
});

describe('the log key and witnesses in administration', () => {
  async function admin(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
    const io = createMemoryIO();
    const code = await main(args, { io, env: { HOME: cwd, XDG_CONFIG_HOME: join(cwd, 'c'), XDG_DATA_HOME: join(cwd, 'd') }, cwd });
    return { code, stdout: io.stdoutText(), stderr: io.stderrText() };
  }

  it('admin init makes the key file beside the database (0600) and prints the verifier key the service then uses', async () => {
    const dir = tempDir();
    const init = await admin(['admin', 'init', '--db', 'server.db', '--json'], dir);
    expect(init.code, init.stderr).toBe(0);
    const shown = JSON.parse(init.stdout);
    expect(shown.ledger_key).toMatch(new RegExp(`^govctl\\.local/ledger/${shown.workspace_id}\\+[0-9a-f]{8}\\+`));
    const { statSync } = await import('node:fs');
    expect(statSync(join(dir, 'server.db.ledger-key')).mode & 0o777).toBe(0o600);
    const service = await serve(join(dir, 'server.db'), shown);
    expect(await logKey(service)).toBe(shown.ledger_key);
    // a second init keeps the key: the same seed signs the new workspace's log
    const again = JSON.parse((await admin(['admin', 'init', '--db', 'server.db', '--json'], dir)).stdout);
    expect(again.ledger_key.split('+')[2]).toBe(shown.ledger_key.split('+')[2]);
  });

  it('serve refuses an existing database without a log key, naming how to create one; ledger-key create makes it once', async () => {
    const dir = tempDir();
    await provision(join(dir, 'old.db'), {});
    const refused = await admin(['serve', '--db', 'old.db', '--port', '0'], dir);
    expect(refused.code).toBe(78);
    expect(refused.stderr).toMatch(/no log key file .*old\.db\.ledger-key.*govctl admin ledger-key create --db/s);
    const created = await admin(['admin', 'ledger-key', 'create', '--db', 'old.db', '--json'], dir);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout).verifier_keys).toHaveLength(1);
    const twice = await admin(['admin', 'ledger-key', 'create', '--db', 'old.db'], dir);
    expect(twice.code).toBe(78);
    expect(twice.stderr).toMatch(/exists already; it is never overwritten/);
    const { chmodSync } = await import('node:fs');
    chmodSync(join(dir, 'old.db.ledger-key'), 0o644);
    const exposed = await admin(['serve', '--db', 'old.db', '--port', '0'], dir);
    expect(exposed.code).toBe(78);
    expect(exposed.stderr).toMatch(/readable by others: chmod 600 it/);
    expect(exposed.stderr).not.toMatch(/PRIVATE/);
  });

  it('admin witness add, list and revoke; a revoked witness cannot cosign', async () => {
    const service = await newService();
    await write(service, 1);
    const witness = new CosignatureSigner('witness.example/w2', SigningKey.fromHex('66'.repeat(32)), () => 1_763_888_400);
    const dir = service.dir;
    const add = await admin(['admin', 'witness', 'add', '--db', 'server.db', '--workspace', service.workspaceId, '--key', witness.verifierKey, '--json'], dir);
    expect(add.code, add.stderr).toBe(0);
    expect(JSON.parse(add.stdout)).toMatchObject({ name: 'witness.example/w2', revoked_at: null });
    expect((await admin(['admin', 'witness', 'add', '--db', 'server.db', '--workspace', service.workspaceId, '--key', 'nonsense'], dir)).code).toBe(64);
    const list = await admin(['admin', 'witness', 'list', '--db', 'server.db', '--workspace', service.workspaceId, '--json'], dir);
    expect(JSON.parse(list.stdout).witnesses.map((w: { name: string }) => w.name)).toEqual(['witness.example/w2']);
    const revoke = await admin(['admin', 'witness', 'revoke', '--db', 'server.db', '--workspace', service.workspaceId, 'witness.example/w2', '--json'], dir);
    expect(JSON.parse(revoke.stdout).revoked_at).not.toBeNull();
    const note = (await call(service, 'GET', wsPath(service.workspaceId, 'ledger/checkpoint'))).text;
    const cosign = await call(service, 'POST', wsPath(service.workspaceId, 'ledger/cosignatures'), {
      body: { checkpoint: note + witness.cosign(note.slice(0, note.indexOf('\n\n') + 1)) },
    });
    expect(cosign.status).toBe(422);
  });
});

describe('govctl ledger cosign', () => {
  it('cosigns a checkpoint that grew consistently, which verify --witness then accepts; refuses a rolled-back log', async () => {
    const service = await newService();
    await write(service, 2);
    const keyFile = join(service.dir, 'witness.key');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(keyFile, `${'77'.repeat(32)}\n`, { mode: 0o600 });
    const name = ['--witness-key', keyFile, '--witness-name', 'witness.example/w3'];
    const printed = await govctl(service, ['ledger', 'cosign', ...name, '--print-key']);
    expect(printed.code, printed.stderr).toBe(0);
    const witnessKey = printed.stdout.trim();
    await addWitness(service.dbPath, { workspaceId: service.workspaceId, key: witnessKey });
    const state = join(service.dir, 'witness-state.json');
    const first = await govctl(service, ['ledger', 'cosign', ...name, '--state', state, '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ tree_size: 3, cosigned: true, witness_key: witnessKey });
    const copy = join(service.dir, 'old.db');
    await sqliteOf(service.server.service.store).db.backup(copy);
    await write(service, 1);
    const second = await govctl(service, ['ledger', 'cosign', ...name, '--state', state, '--json']);
    expect(JSON.parse(second.stdout)).toMatchObject({ tree_size: 4, previous_size: 3 });
    const verified = await govctl(service, ['ledger', 'verify', '--state', join(service.dir, 'auditor.json'), '--witness', witnessKey]);
    expect(verified.code, verified.stderr).toBe(0);
    await stop(service);
    copyFileSync(copy, service.dbPath);
    rmSync(`${service.dbPath}-wal`, { force: true });
    rmSync(`${service.dbPath}-shm`, { force: true });
    const rolledBack = await serve(service.dbPath, service.identity);
    const refused = await govctl(rolledBack, ['ledger', 'cosign', ...name, '--state', state]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/the log shrank from 4 to 3 leaves/);
  });
});

describe('govctl ledger audit', () => {
  it('passes on an untouched log, and names a forged coverage table, a changed record, a deleted one and a reordered log (2)', async () => {
    const service = await newService();
    await write(service, 3);
    await write(service, 1, 'attestation');
    const env = { GOVCTL_LEDGER_KEY: await logKey(service) };
    const clean = await govctl(service, ['ledger', 'audit', '--json'], env);
    expect(clean.code, clean.stderr).toBe(0);
    expect(JSON.parse(clean.stdout)).toMatchObject({ tree_size: 4, records: 4, evidence: 3, attestations: 1, problems: [], verified: true });

    // A forged coverage table: every control of the catalogue earned just now.
    const { CONTROLS } = await import('../../src/core/index.js');
    const db = new Database(service.dbPath);
    const insert = db.prepare('INSERT OR REPLACE INTO control_coverage (workspace_id, control_id, last_earned_ms) VALUES (?, ?, ?)');
    for (const control of CONTROLS) insert.run(service.workspaceId, control.id, Date.now());
    db.close();
    const forged = await govctl(service, ['ledger', 'audit'], env);
    expect(forged.code).toBe(2);
    expect(forged.stdout).toMatch(/problem\tposture: the service states overall 100 %, the verified records support \d+ % \(a forged coverage table\?\)/);
    expect(forged.stdout).toMatch(/problem\tgates: eu_ai_act is passing at the service, failing from the verified records/);

    const ids = await write(service, 2);
    tamper(service.dbPath, "UPDATE evidence SET source = 'import' WHERE record_id = ?", ids[0]);
    tamper(service.dbPath, 'DELETE FROM evidence WHERE record_id = ?', ids[1]);
    const changed = await govctl(service, ['ledger', 'audit', '--json'], env);
    expect(changed.code).toBe(2);
    const problems = JSON.parse(changed.stdout).problems as string[];
    expect(problems).toContain(`leaf 4: evidence ${ids[0]} as returned is not what the log committed to (changed in storage)`);
    expect(problems).toContain(`leaf 5: evidence ${ids[1]} is logged but the service no longer returns it (deleted)`);

    // Reordered: two leaves' entries swapped in storage.
    const swap = new Database(service.dbPath);
    const [a, b] = swap.prepare('SELECT leaf_index, entry FROM ledger_leaves ORDER BY leaf_index LIMIT 2').all() as { leaf_index: number; entry: Buffer }[];
    swap.transaction(() => {
      swap.prepare('UPDATE ledger_leaves SET entry = ? WHERE leaf_index = ?').run(b.entry, a.leaf_index);
      swap.prepare('UPDATE ledger_leaves SET entry = ? WHERE leaf_index = ?').run(a.entry, b.leaf_index);
    })();
    swap.close();
    const reordered = await govctl(service, ['ledger', 'audit', '--json'], env);
    expect(reordered.code).toBe(2);
    expect(JSON.parse(reordered.stdout).problems).toContain(
      'the entries served for leaves 0..5 do not hash to the signed root: the stored log was altered (entries changed, removed or reordered)',
    );
  });
});

describe('govctl ledger audit and the signatures inside records', () => {
  it('checks client_sig with the configured signing key and witness_sig of attestations, naming a record signed with another key (2)', async () => {
    const { signClientSig, signWitness } = await import('../../src/core/index.js');
    const service = await newService();
    const key = SigningKey.fromHex('88'.repeat(32));
    const other = SigningKey.fromHex('99'.repeat(32));
    const record = (signer: SigningKey) => {
      const r = evidenceRecord('change_event', { occurred_at: '2026-11-23T09:00:00.000Z' });
      return { ...r, client_sig: signClientSig(r, service.workspaceId, signer), client_sig_algo: 'hmac-sha256' };
    };
    const good = await call(service, 'POST', wsPath(service.workspaceId, 'grc/evidence'), { body: record(key) });
    expect(good.status, good.text).toBe(201);
    const bad = await call(service, 'POST', wsPath(service.workspaceId, 'grc/evidence'), { body: record(other) });
    const att = attestation();
    const witnessed = await call(service, 'POST', wsPath(service.workspaceId, 'attestations/external'), {
      body: { ...att, ...signWitness(att, service.workspaceId, key) },
    });
    expect(witnessed.json.trust_tier).toBe('witnessed');
    await service.server.service.store.ledger.integrate();
    const env = { GOVCTL_LEDGER_KEY: await logKey(service) };
    const unchecked = await govctl(service, ['ledger', 'audit', '--json'], env);
    expect(JSON.parse(unchecked.stdout)).toMatchObject({ client_sig_unchecked: 2, problems: [] });
    const checked = await govctl(service, ['ledger', 'audit', '--json'], { ...env, SERVICE_SIGNING_KEY: '88'.repeat(32) });
    expect(checked.code).toBe(2);
    expect(JSON.parse(checked.stdout).problems).toEqual([`leaf 1: evidence ${bad.json.record_id}: client_sig does not verify with the configured signing key`]);
  });
});

/** A pass-through proxy on 127.0.0.1 that records the path of every request it forwards. */
async function countingProxy(target: string): Promise<{ url: string; paths: string[]; close: () => Promise<void> }> {
  const { createServer, request } = await import('node:http');
  const paths: string[] = [];
  const proxy = createServer((req, res) => {
    paths.push(`${req.method} ${req.url}`);
    const upstream = request(new URL(req.url!, target), { method: req.method, headers: req.headers }, (reply) => {
      res.writeHead(reply.statusCode!, reply.headers);
      reply.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
  const { port } = proxy.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, paths, close: () => new Promise((done) => proxy.close(() => done())) };
}

describe('govctl ledger audit in bulk', () => {
  it('reads records a page at a time, not one request each, and names a record stored without a leaf (2)', async () => {
    const service = await newService();
    const records = Array.from({ length: 300 }, () => evidenceRecord('change_event', { identity: 'alice@example.com' }));
    const batch = await call(service, 'POST', wsPath(service.workspaceId, 'grc/evidence/batch'), { body: { records } });
    expect(batch.status, batch.text).toBeLessThan(300);
    await write(service, 2, 'attestation');
    // executed long before any lookback window, at the earliest zone offset: still audited
    const old = await call(service, 'POST', wsPath(service.workspaceId, 'attestations/external'), {
      body: attestation({ executed_at: '0001-01-01T00:00:00+14:00' }),
    });
    expect(old.status, old.text).toBe(201);
    await service.server.service.store.ledger.integrate();
    const env = { GOVCTL_LEDGER_KEY: await logKey(service) };
    const proxy = await countingProxy(service.url);
    try {
      const clean = await govctl({ url: proxy.url, apiKey: service.apiKey }, ['ledger', 'audit', '--json'], env);
      expect(clean.code, clean.stderr).toBe(0);
      expect(JSON.parse(clean.stdout)).toMatchObject({ tree_size: 303, records: 303, evidence: 300, attestations: 3, problems: [] });
      // checkpoint, two entry bundles (256 + 47 leaves), one export page, one attestation page,
      // posture brief, gates — and whatever resolves the workspace — never a GET per record
      expect(proxy.paths.filter((p) => /grc\/evidence\/rec_|attestations\/att_/.test(p))).toEqual([]);
      expect(proxy.paths.length).toBeLessThanOrEqual(10);

      // A record put into storage behind the log's back: a copy of a stored one under a new id.
      const db = new Database(service.dbPath);
      const columns = (db.prepare('PRAGMA table_info(evidence)').all() as { name: string }[])
        .map((c) => c.name)
        .filter((c) => c !== 'seq' && c !== 'record_id');
      const unlogged = 'rec_01900000-0000-7000-8000-000000000001';
      db.prepare(`INSERT INTO evidence (record_id, ${columns.join(', ')}) SELECT ?, ${columns.join(', ')} FROM evidence ORDER BY seq LIMIT 1`).run(unlogged);
      db.close();
      const smuggled = await govctl({ url: proxy.url, apiKey: service.apiKey }, ['ledger', 'audit', '--json'], env);
      expect(smuggled.code).toBe(2);
      expect(JSON.parse(smuggled.stdout).problems).toEqual([`evidence ${unlogged} is stored but the log holds no entry for it (stored without being logged)`]);
    } finally {
      await proxy.close();
    }
  });

  it('does not count a record written after the audited checkpoint as unlogged', async () => {
    const service = await newService();
    await write(service, 2);
    const env = { GOVCTL_LEDGER_KEY: await logKey(service) };
    // Written (and given its leaf index) but not yet integrated: the checkpoint does not cover it.
    await call(service, 'POST', wsPath(service.workspaceId, 'grc/evidence'), { body: evidenceRecord('change_event') });
    const audit = await govctl(service, ['ledger', 'audit', '--json'], env);
    expect(JSON.parse(audit.stdout)).toMatchObject({ tree_size: 2, records: 2, logged_after_checkpoint: 1 });
  });

  it('judges a payload by its exact text: a digit changed past double precision is named, the same value spaced differently is not (2)', async () => {
    const service = await newService();
    // findings past 2^53: JSON.parse reads 12345678901234567890 and …891 as the same number
    const big = '12345678901234567890';
    const written = await call(service, 'POST', wsPath(service.workspaceId, 'grc/evidence'), {
      body: JSON.stringify(evidenceRecord('vendor_risk')).replace('"findings":0', `"findings":${big}`),
    });
    expect(written.status, written.text).toBe(201);
    const id = (written.json as { record_id: string }).record_id;
    const other = await call(service, 'POST', wsPath(service.workspaceId, 'grc/evidence'), { body: evidenceRecord('model_drift_event') });
    await service.server.service.store.ledger.integrate();
    const env = { GOVCTL_LEDGER_KEY: await logKey(service) };
    expect((await govctl(service, ['ledger', 'audit', '--json'], env)).code).toBe(0);

    tamper(service.dbPath, 'UPDATE evidence SET payload = replace(payload, ?, ?) WHERE record_id = ?', big, '12345678901234567891', id);
    tamper(service.dbPath, "UPDATE evidence SET payload = replace(payload, ',', ' , ') WHERE record_id = ?", other.json.record_id);
    const audit = await govctl(service, ['ledger', 'audit', '--json'], env);
    expect(audit.code).toBe(2);
    const problems = JSON.parse(audit.stdout).problems as string[];
    expect(problems).toContain(`leaf 0: evidence ${id} as returned is not what the log committed to (changed in storage)`);
    // the other record, its payload spaced differently but the same JSON, still verifies (and counts)
    expect(problems.filter((p) => p.includes(String(other.json.record_id)))).toEqual([]);
    expect(JSON.parse(audit.stdout)).toMatchObject({ evidence: 1 });
  });
});
