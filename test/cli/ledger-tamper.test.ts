/**
 * An adversarial pass over `govctl ledger`: tampering the issue-12 tests do not cover, done to a
 * real database file under a real service on 127.0.0.1, or to what the service sends (a rewriting
 * proxy on 127.0.0.1 stands for a dishonest service).
 */
import { createHash } from 'node:crypto';
import { createServer, request } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { provision } from '../../src/server/index.js';
import { ledgerServices, logKey, type LedgerService } from '../helpers/ledger-services.js';
import { call, evidenceRecord, wsPath } from '../helpers/service-requests.js';
import { runPythonJson } from '../helpers/python.js';

type Service = LedgerService;

const { tempDir, newService, serve, stop, onCleanup, govctl } = ledgerServices('govctl-ledger-tamper');

async function writeEvidence(service: Service, n: number): Promise<string[]> {
  const ids = [];
  for (let i = 0; i < n; i++) {
    const reply = await call(service, 'POST', wsPath(service.workspaceId, 'grc/evidence'), {
      body: evidenceRecord('change_event', { identity: 'alice@example.com', resource: 'github.com/acme/app', environment: 'production' }),
    });
    ids.push(reply.json.record_id as string);
  }
  await service.server.service.store.ledger.integrate();
  return ids;
}

/** Canonical JSON as docs/ledger.md states it (keys sorted, no white space), written here for the forged entries. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/**
 * A proxy on 127.0.0.1 that passes everything through, rewriting the text bodies `rewrite` changes
 * (and, with `redirect`, the URL asked of the service).
 */
async function rewritingProxy(target: string, rewrite: (path: string, body: string) => string, redirect: (url: URL) => void = () => {}): Promise<string> {
  const proxy = createServer((req, res) => {
    const url = new URL(req.url!, target);
    redirect(url);
    const upstream = request(url, { method: req.method, headers: { ...req.headers, 'accept-encoding': 'identity' } }, (reply) => {
      const chunks: Buffer[] = [];
      reply.on('data', (chunk: Buffer) => chunks.push(chunk));
      reply.on('end', () => {
        const raw = Buffer.concat(chunks);
        // tiles are bytes, passed as they are; everything else is UTF-8 text
        const body = req.url!.includes('/ledger/tile/') ? raw : Buffer.from(rewrite(req.url!, raw.toString('utf8')), 'utf8');
        const headers = { ...reply.headers, 'content-length': String(body.length) };
        delete headers['transfer-encoding'];
        res.writeHead(reply.statusCode!, headers);
        res.end(body);
      });
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
  onCleanup(() => new Promise((done) => proxy.close(() => done())));
  return `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
}

describe('govctl ledger audit against a dishonest service', () => {
  it('names an exported record whose payload a second, later "payload" member replaces for every JSON reader (2)', async () => {
    const service = await newService();
    const [target] = await writeEvidence(service, 2);
    const env = { GOVCTL_LEDGER_KEY: await logKey(service) };
    expect((await govctl(service, ['ledger', 'audit', '--json'], env)).code).toBe(0);
    let rewritten = 0;
    const url = await rewritingProxy(service.url, (path, body) => {
      if (!path.includes('grc/evidence/export')) return body;
      return body
        .split('\n')
        .map((line) => {
          if (!line.includes(`"record_id":"${target}"`)) return line;
          rewritten += 1;
          // the committed payload stays where it was; a member after "source" overrides it
          return line.replace(/\}$/, ',"p\\u0061yload":{"forged":true}}');
        })
        .join('\n');
    });
    const audit = await govctl({ url, apiKey: service.apiKey }, ['ledger', 'audit', '--json'], env);
    expect(rewritten).toBe(1);
    // what any JSON reader of that export line sees is not the committed record
    expect(audit.code).toBe(2);
    expect(JSON.parse(audit.stdout).problems).toEqual([`leaf 0: evidence ${target} as returned is not what the log committed to (changed in storage)`]);
  });
});

describe('a record changed after it was logged, then logged again under the same id', () => {
  it('ledger prove proves it at its new leaf (a documented limit), ledger verify sees only growth, ledger audit names it (2)', async () => {
    const service = await newService();
    const [target] = await writeEvidence(service, 2);
    const env = { GOVCTL_LEDGER_KEY: await logKey(service) };
    const state = join(tempDir(), 'state.json');
    expect((await govctl(service, ['ledger', 'verify', '--state', state], env)).code).toBe(0);

    // Someone with write access to the database (not to the key) changes the record, moves the
    // old leaf's lookup column aside and appends a leaf committing to the changed record; the
    // service integrates and signs it with the next write.
    const db = new Database(service.dbPath);
    db.prepare("UPDATE evidence SET environment = 'staging' WHERE record_id = ?").run(target);
    const changed = (await call(service, 'GET', wsPath(service.workspaceId, `grc/evidence/${target}`))).text;
    const record = JSON.parse(changed) as Record<string, unknown>;
    const old = db.prepare('SELECT ws_key, entry FROM ledger_leaves WHERE record_id = ?').get(target) as { ws_key: number; entry: Buffer };
    const entry = JSON.parse(old.entry.toString()) as Record<string, string>;
    const forged = canonical({ ...entry, sha256: createHash('sha256').update(canonical(record)).digest('hex') });
    db.prepare("UPDATE ledger_leaves SET record_id = 'moved-aside' WHERE record_id = ?").run(target);
    // leaf 0 is the workspace's default gate policy, 1 and 2 the records: the forged leaf is 3
    db.prepare("INSERT INTO ledger_leaves (leaf_key, ws_key, leaf_index, kind, record_id, entry) VALUES ((? << 40) + 3, ?, 3, 'evidence', ?, ?)").run(
      old.ws_key,
      old.ws_key,
      target,
      Buffer.from(forged),
    );
    db.close();
    await writeEvidence(service, 1);

    const prove = await govctl(service, ['ledger', 'prove', target, '--json'], env);
    expect(prove.code, prove.stderr).toBe(0);
    expect(JSON.parse(prove.stdout)).toMatchObject({ leaf_index: 3, tree_size: 5 });
    expect((await govctl(service, ['ledger', 'verify', '--state', state], env)).code).toBe(0);
    const audit = await govctl(service, ['ledger', 'audit', '--json'], env);
    expect(audit.code).toBe(2);
    expect(JSON.parse(audit.stdout).problems).toEqual([
      `leaf 3: evidence ${target} is logged again (first at leaf 1)`,
      `leaf 1: evidence ${target} as returned is not what the log committed to (changed in storage)`,
    ]);
  });
});

describe('govctl ledger checkpoint and the signature lines of a note, judged as an independent verifier judges them', () => {
  it(
    'ignores lines of other keys and a line under the log name with another key id, and refuses a bad or malformed line (2)',
    { timeout: 60_000 },
    async () => {
      const service = await newService();
      await writeEvidence(service, 3);
      const vkey = await logKey(service);
      const note = (await call(service, 'GET', wsPath(service.workspaceId, 'ledger/checkpoint'))).text;
      const line = note.split('\n').find((l) => l.startsWith('\u2014 '))!;
      const [, name, b64] = line.split(' ') as [string, string, string];
      const flipped = (at: number) => {
        const raw = Buffer.from(b64, 'base64');
        raw[at] ^= 1;
        return `\u2014 ${name} ${raw.toString('base64')}`;
      };
      const variants: [string, string, boolean][] = [
        ['as served', note, true],
        ['a line by another key', `${note}\u2014 witness.example/w9 AAAAAAE=\n`, true],
        ['the log name with another key id, beside the real line', `${note}${flipped(0)}\n`, true],
        ['only the log name with another key id', note.replace(line, flipped(0)), false],
        ['a second line by the log key that does not verify', `${note}${flipped(10)}\n`, false],
        ['a line that is not base64', `${note}\u2014 witness.example/w9 not-base64\n`, false],
        ['a line without its newline', note.slice(0, -1), false],
        ['carriage returns', note.replace(/\n/g, '\r\n'), false],
        ['the text changed (size)', note.replace(/\n4\n/, '\n3\n'), false],
      ];
      let served = note;
      const url = await rewritingProxy(service.url, (path, body) => (path.endsWith('ledger/checkpoint') ? served : body));
      for (const [what, variant, expected] of variants) {
        served = variant;
        const independent = await runPythonJson<{ accepted: boolean; why: string }>(join(import.meta.dirname, 'ledger_note_judge.py'), { vkey, note: variant });
        const result = await govctl({ url, apiKey: service.apiKey }, ['ledger', 'checkpoint'], { GOVCTL_LEDGER_KEY: vkey });
        expect({ what, independent: independent.accepted }).toEqual({ what, independent: expected });
        expect({ what, code: result.code }).toEqual({ what, code: expected ? 0 : 2 });
      }
    },
  );

  it("refuses another workspace's checkpoint under the pinned key (2), though one seed signs both", async () => {
    const service = await newService();
    await writeEvidence(service, 1);
    const pinned = await logKey(service);
    const other = await provision(service.dbPath, { orgName: 'o2', workspaceName: 'w2' });
    const b = { url: service.url, apiKey: other.api_key };
    await call(b, 'POST', wsPath(other.workspace_id, 'grc/evidence'), { body: evidenceRecord('change_event') });
    await service.server.service.store.ledger.integrate();
    const otherKey = await logKey({ ...b, workspaceId: other.workspace_id });
    expect(otherKey.split('+')[2]).toBe(pinned.split('+')[2]);
    for (const args of [
      ['ledger', 'checkpoint'],
      ['ledger', 'audit'],
      ['ledger', 'verify', '--state', join(tempDir(), 's.json')],
    ]) {
      const result = await govctl(b, args, { GOVCTL_LEDGER_KEY: pinned });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/does not verify with the pinned log key .*: the note carries no signature by a known key/);
    }
  });
});

describe('logged leaves edited in the database and the tree rebuilt by a restart', () => {
  it('a rebuilt tree the restarted service signs passes prove and audit, and verify --state names it (2)', async () => {
    const service = await newService();
    const [target] = await writeEvidence(service, 3);
    const vkey = await logKey(service);
    const env = { GOVCTL_LEDGER_KEY: vkey };
    const st = join(tempDir(), 's.json');
    expect((await govctl(service, ['ledger', 'verify', '--state', st], env)).code).toBe(0);
    await stop(service);
    const db = new Database(service.dbPath);
    db.prepare("UPDATE evidence SET environment = 'staging' WHERE record_id = ?").run(target);
    db.close();
    // the changed record's body as the service returns it, for the forged entry's sha256
    const svc2 = await serve(service.dbPath, service.identity);
    const changed = (await call(svc2, 'GET', wsPath(service.workspaceId, `grc/evidence/${target}`))).text;
    await stop(svc2);
    const db2 = new Database(service.dbPath);
    const old = db2.prepare('SELECT entry FROM ledger_leaves WHERE record_id = ?').get(target) as { entry: Buffer };
    const entry = JSON.parse(old.entry.toString());
    db2.prepare('UPDATE ledger_leaves SET entry = ? WHERE record_id = ?').run(
      Buffer.from(
        canonical({
          ...entry,
          sha256: createHash('sha256')
            .update(canonical(JSON.parse(changed)))
            .digest('hex'),
        }),
      ),
      target,
    );
    db2.exec('DELETE FROM ledger_nodes; DELETE FROM ledger_checkpoints; DELETE FROM ledger_cosignatures; UPDATE ledger_state SET integrated_size = 0');
    db2.close();
    const svc3 = await serve(service.dbPath, service.identity);
    await writeEvidence(svc3, 1);
    // nothing kept: the log agrees with itself and with the changed record
    expect((await govctl(svc3, ['ledger', 'prove', target], env)).code).toBe(0);
    expect((await govctl(svc3, ['ledger', 'audit'], env)).code).toBe(0);
    const verify = await govctl(svc3, ['ledger', 'verify', '--state', st], env);
    expect(verify.code).toBe(2);
    expect(verify.stderr).toMatch(/the tree of size 5 does not extend the one of size 4: the log's history was rewritten/);
  });
});

describe('govctl ledger audit against a service that pages for ever', () => {
  it('stops reading an export and a list that come back to a page they returned, and says so (2)', { timeout: 60_000 }, async () => {
    const service = await newService();
    const records = Array.from({ length: 260 }, () => evidenceRecord('change_event'));
    expect((await call(service, 'POST', wsPath(service.workspaceId, 'grc/evidence/batch'), { body: { records } })).status).toBe(200);
    await service.server.service.store.ledger.integrate();
    const env = { GOVCTL_LEDGER_KEY: await logKey(service) };
    expect((await govctl(service, ['ledger', 'audit', '--json'], env)).code).toBe(0);
    // The proxy drops where to continue from, so every page is the first; the attestation list's
    // cursor always says there is more.
    const url = await rewritingProxy(
      service.url,
      (path, body) => (path.includes('/attestations?') ? JSON.stringify({ ...JSON.parse(body), next_cursor: 'again' }) : body),
      (asked) => {
        asked.searchParams.delete('after');
        asked.searchParams.delete('cursor');
      },
    );
    const audit = await govctl({ url, apiKey: service.apiKey }, ['ledger', 'audit', '--json'], env);
    expect(audit.code).toBe(2);
    const problems = JSON.parse(audit.stdout).problems as string[];
    expect(problems).toContainEqual(expect.stringMatching(/^the evidence export came back to a page it had returned \(after rec_\S+\): stopped reading it$/));
    expect(problems).toContain('the attestation list came back to a page it had returned (after again): stopped reading it');
    // the first page's records, returned twice, are named as such
    expect(problems).toContainEqual(expect.stringMatching(/^leaf \d+: evidence rec_\S+ is returned more than once$/));
  });

  it('stops reading an export that never ends, past the tree size and 100 000 records more (2)', { timeout: 60_000 }, async () => {
    const service = await newService();
    await writeEvidence(service, 1);
    const env = { GOVCTL_LEDGER_KEY: await logKey(service) };
    // every export page is 250 records made up here, each continuing after a new one (the service
    // is asked for its first page each time)
    let pages = 0;
    const url = await rewritingProxy(
      service.url,
      (path, body) => {
        if (!path.includes('grc/evidence/export')) return body;
        pages += 1;
        return Array.from({ length: 250 }, (_, i) => JSON.stringify({ record_id: `rec_made_up_${pages}_${i}` })).join('\n') + '\n';
      },
      (asked) => asked.searchParams.delete('after'),
    );
    const audit = await govctl({ url, apiKey: service.apiKey }, ['ledger', 'audit', '--json'], env);
    expect(audit.code).toBe(2);
    expect(JSON.parse(audit.stdout).problems).toContain(
      'the service returned 100250 records for a log of size 1: stopped reading (each record is returned once)',
    );
    expect(pages).toBe(402);
  });
});

describe('govctl ledger audit against a service that states more than its records support', () => {
  it('names a framework in the posture brief and in the gates that the control catalogue does not hold (2)', async () => {
    const service = await newService();
    await writeEvidence(service, 2);
    const env = { GOVCTL_LEDGER_KEY: await logKey(service) };
    expect((await govctl(service, ['ledger', 'audit', '--json'], env)).code).toBe(0);
    const url = await rewritingProxy(service.url, (path, body) => {
      if (path.includes('grc/posture-brief')) {
        const brief = JSON.parse(body) as { frameworks: unknown[] };
        return JSON.stringify({ ...brief, frameworks: [...brief.frameworks, { framework: 'made_up_act', score_pct: 100 }] });
      }
      if (path.includes('grc/gates/check')) {
        const gates = JSON.parse(body) as { results: unknown[] };
        return JSON.stringify({ ...gates, results: [...gates.results, { framework: 'made_up_act', threshold_pct: 80, status: 'passing' }] });
      }
      return body;
    });
    const audit = await govctl({ url, apiKey: service.apiKey }, ['ledger', 'audit', '--json'], env);
    expect(audit.code).toBe(2);
    expect(JSON.parse(audit.stdout).problems).toEqual([
      "posture: the service states a framework made_up_act that this govctl's control catalogue does not hold",
      "gates: the service judges a framework made_up_act that this govctl's control catalogue does not hold",
    ]);
  });
});
