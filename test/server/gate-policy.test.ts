/**
 * The gate policy as evidence (docs/ledger.md, "Gate policy changes"), in a real service over a
 * real database of the test backend: every change, the defaults a workspace starts with included,
 * is a `gate_policy` leaf of the workspace's log whose sha256 is that of the change record as the
 * service returns it; gates follow the latest logged change and nothing else in the database.
 * Hashes are checked against canonical JSON written here from its definition (sorted keys, no
 * white space), not against the product's own canonicaliser.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceApi } from '../../src/client/index.js';
import { DEFAULT_GATE_POLICY, FRAMEWORKS } from '../../src/core/index.js';
import { resetGatePolicy, setGatePolicy } from '../../src/server/index.js';
import { changeStoredRows, storedRows } from '../helpers/backend.js';
import { provisionWorkspace, startTestServer, type TestServer } from '../helpers/server.js';
import { call, evidenceRecord, wsPath } from '../helpers/service-requests.js';

/** Canonical JSON of plain JSON values with ASCII strings and integers (what a change record holds). */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const object = value as Record<string, unknown>;
  return `{${Object.keys(object)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical(object[key])}`)
    .join(',')}}`;
}
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** A change record as the service lists it. */
interface Change {
  action: string;
  change_id: string;
  changed_at: string;
  changed_by: string;
  framework: string | null;
  policy: Record<string, { mode: string; threshold: number }>;
  workspace_id: string;
}

/** A leaf entry, with its index. */
interface Leaf {
  id: string;
  kind: string;
  received_at: string;
  sha256: string;
  workspace_id: string;
  leaf_index: number;
}

/** One member of a reply's list, by a member's value. */
interface Listed {
  gate_id: string;
  framework: string;
  [member: string]: unknown;
}

const defaults = () => Object.fromEntries(FRAMEWORKS.map((framework) => [framework, { ...DEFAULT_GATE_POLICY[framework] }]));

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});

async function workspace() {
  const ws = { url: server.url, ...(await provisionWorkspace(server.dbPath)) };
  const get = async (rest: string) => (await call(ws, 'GET', wsPath(ws.workspaceId, rest))).json;
  return { ...ws, get };
}

/** The leaf entry of each change (integrated first), by change id. */
async function leavesOf(ws: Awaited<ReturnType<typeof workspace>>, ids: readonly string[]): Promise<Record<string, Leaf>> {
  await server.server.service.store.ledger.integrate();
  const out: Record<string, Leaf> = {};
  for (const id of ids) {
    const proof = await call(ws, 'GET', wsPath(ws.workspaceId, `ledger/proof/inclusion?id=${id}`));
    expect(proof.status).toBe(200);
    out[id] = { ...JSON.parse(proof.json.entry), leaf_index: proof.json.leaf_index };
  }
  return out;
}

describe('GET grc/gates/policy and the gate_policy leaves', () => {
  it('logs the defaults a workspace starts with: the first leaf of its log, by govctl', async () => {
    const ws = await workspace();
    const answer = await ws.get('grc/gates/policy');
    expect(answer.policy).toEqual(defaults());
    expect(answer.changes).toHaveLength(1);
    const [change] = answer.changes;
    expect(Object.keys(change)).toEqual(['action', 'change_id', 'changed_at', 'changed_by', 'framework', 'policy', 'workspace_id']);
    expect(change).toMatchObject({ action: 'defaults', changed_by: 'govctl', framework: null, policy: defaults(), workspace_id: ws.workspaceId });
    expect(change.change_id).toMatch(/^gpc_[0-9a-f-]{36}$/);
    expect(change.changed_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const leaf = (await leavesOf(ws, [change.change_id]))[change.change_id];
    expect(leaf).toEqual({
      id: change.change_id,
      kind: 'gate_policy',
      received_at: change.changed_at,
      sha256: sha256(canonical(change)),
      workspace_id: ws.workspaceId,
      leaf_index: 0,
    });
  });

  it('logs every change with who made it, when, and the whole policy after it; gates follow the latest', async () => {
    const ws = await workspace();
    await call(ws, 'POST', wsPath(ws.workspaceId, 'grc/evidence'), { body: evidenceRecord('ai_risk_assessment') });
    const before = await ws.get('grc/gates/check');
    expect(before.gates[0]).toMatchObject({ gate_id: 'gate_eu_ai_act', passing: false, exit_code: 2 });

    await setGatePolicy(server.dbPath, {
      workspaceId: ws.workspaceId,
      framework: 'eu_ai_act',
      mode: 'advisory',
      threshold: 10,
      changedBy: 'alice@example.com',
    });
    await setGatePolicy(server.dbPath, { workspaceId: ws.workspaceId, framework: 'iso_27001', mode: 'required', changedBy: 'bob@example.com' });
    await resetGatePolicy(server.dbPath, { workspaceId: ws.workspaceId, framework: 'eu_ai_act', changedBy: 'carol@example.com' });
    await setGatePolicy(server.dbPath, { workspaceId: ws.workspaceId, framework: 'soc2_type2', threshold: 5 });

    const { policy, changes } = (await ws.get('grc/gates/policy')) as { policy: Change['policy']; changes: Change[] };
    expect(changes.map((c: Change) => [c.action, c.framework, c.changed_by])).toEqual([
      ['defaults', null, 'govctl'],
      ['set', 'eu_ai_act', 'alice@example.com'],
      ['set', 'iso_27001', 'bob@example.com'],
      ['unset', 'eu_ai_act', 'carol@example.com'],
      ['set', 'soc2_type2', 'admin'],
    ]);
    expect(changes[1].policy.eu_ai_act).toEqual({ mode: 'advisory', threshold: 10 });
    expect(changes[2].policy).toMatchObject({ eu_ai_act: { mode: 'advisory', threshold: 10 }, iso_27001: { mode: 'required', threshold: 70 } });
    const expected = { ...defaults(), iso_27001: { mode: 'required', threshold: 70 }, soc2_type2: { mode: 'advisory', threshold: 5 } };
    expect(policy).toEqual(expected);
    expect(changes[4].policy).toEqual(expected);
    const times = changes.map((c) => Date.parse(c.changed_at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);

    // each change is a leaf, in order, committing to the change exactly as listed
    const leaves = await leavesOf(
      ws,
      changes.map((c: Change) => c.change_id),
    );
    const indexes = changes.map((c: Change) => leaves[c.change_id].leaf_index);
    expect(indexes[0]).toBe(0);
    expect([...indexes].sort((a, b) => a - b)).toEqual(indexes);
    for (const change of changes)
      expect(leaves[change.change_id]).toMatchObject({ kind: 'gate_policy', sha256: sha256(canonical(change)), received_at: change.changed_at });

    // gates, the posture brief and the policy listing follow the latest change
    const after = await ws.get('grc/gates/check');
    expect(after.gates.find((g: Listed) => g.gate_id === 'gate_eu_ai_act')).toMatchObject({ blocking: true, exit_code: 2 });
    expect(after.gates.find((g: Listed) => g.gate_id === 'gate_iso_27001')).toMatchObject({ blocking: true, exit_code: 2 });
    expect(after.results.find((r: Listed) => r.framework === 'soc2_type2')).toMatchObject({ mode: 'advisory', threshold_pct: 5 });
    expect((await ws.get('grc/gates')).policies.map((p: Listed) => [p.framework, p.source])).toEqual([
      ['eu_ai_act', 'default'],
      ['iso_42001', 'default'],
      ['soc2_type2', 'workspace'],
      ['iso_27001', 'workspace'],
      ['nist_airf', 'default'],
    ]);
  });

  it('answers the same through the client library, for the workspace named', async () => {
    const ws = await workspace();
    await setGatePolicy(server.dbPath, { workspaceId: ws.workspaceId, framework: 'nist_airf', mode: 'required', changedBy: 'dana' });
    const api = createServiceApi({ baseUrl: server.url, apiKey: ws.apiKey });
    try {
      const answer = await api.gatePolicy(ws.workspaceId);
      expect(answer).toEqual(await ws.get('grc/gates/policy'));
      expect(answer.changes.map((c) => c.action)).toEqual(['defaults', 'set']);
      expect(await api.gatePolicy()).toEqual(answer);
    } finally {
      await api.close();
    }
  });

  it('ignores a policy edited in the database; an edited change no longer matches its leaf', async () => {
    const ws = await workspace();
    await call(ws, 'POST', wsPath(ws.workspaceId, 'grc/evidence'), { body: evidenceRecord('ai_risk_assessment') });
    await setGatePolicy(server.dbPath, { workspaceId: ws.workspaceId, framework: 'iso_27001', mode: 'required' });
    const check = await ws.get('grc/gates/check');
    const brief = await ws.get('grc/posture-brief');
    expect(check.passed).toBe(false);

    // the table the service kept before the log: every threshold 0
    for (const framework of FRAMEWORKS) {
      await changeStoredRows(server.dbPath, 'INSERT INTO gate_policy (workspace_id, framework, mode, threshold, updated_ms) VALUES (?, ?, ?, ?, ?)', [
        ws.workspaceId,
        framework,
        'advisory',
        0,
        1,
      ]);
    }
    expect(await ws.get('grc/gates/check')).toEqual(check);
    expect(await ws.get('grc/posture-brief')).toEqual(brief);

    // the latest change itself, every threshold 0: what the service then says is in force is a
    // change whose hash its leaf does not hold (what `ledger audit` names)
    const { changes } = (await ws.get('grc/gates/policy')) as { changes: Change[] };
    const latest = changes[changes.length - 1];
    const weakened = { ...latest, policy: Object.fromEntries(FRAMEWORKS.map((f) => [f, { mode: latest.policy[f].mode, threshold: 0 }])) };
    await changeStoredRows(server.dbPath, 'UPDATE gate_policy_changes SET record = ? WHERE change_id = ?', [canonical(weakened), latest.change_id]);
    const served = (await ws.get('grc/gates/policy')).changes.at(-1);
    expect(served).toEqual(weakened);
    const leaf = (await leavesOf(ws, [latest.change_id]))[latest.change_id];
    expect(leaf.sha256).toBe(sha256(canonical(latest)));
    expect(leaf.sha256).not.toBe(sha256(canonical(served)));
  });

  it('logs the defaults of a workspace that has none once, before its first gate evaluation, with the rules it had before the log', async () => {
    const store = server.server.service.store;
    const created = await store.identity.provision({ orgName: 'before', workspaceName: 'before' }, Date.now());
    const ws = { url: server.url, apiKey: created.api_key, workspaceId: created.workspace_id };
    await changeStoredRows(server.dbPath, 'INSERT INTO gate_policy (workspace_id, framework, mode, threshold, updated_ms) VALUES (?, ?, ?, ?, ?)', [
      ws.workspaceId,
      'soc2_type2',
      'required',
      55,
      1,
    ]);
    expect(await storedRows(server.dbPath, 'SELECT change_id FROM gate_policy_changes WHERE workspace_id = ?', [ws.workspaceId])).toEqual([]);
    const replies = await Promise.all(
      ['grc/gates/check', 'grc/posture-brief', 'grc/gates', 'grc/gates/policy', 'grc/gates/check', 'grc/gates/policy'].map((rest) =>
        call(ws, 'GET', wsPath(ws.workspaceId, rest)),
      ),
    );
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const { changes } = (await call(ws, 'GET', wsPath(ws.workspaceId, 'grc/gates/policy'))).json as { changes: Change[] };
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ action: 'defaults', changed_by: 'govctl', policy: { ...defaults(), soc2_type2: { mode: 'required', threshold: 55 } } });
    expect(replies[0].json.results.find((r: Listed) => r.framework === 'soc2_type2')).toMatchObject({ mode: 'required', threshold_pct: 55 });
    const leaves = await storedRows(server.dbPath, "SELECT record_id FROM ledger_leaves WHERE kind = 'gate_policy' AND record_id = ?", [changes[0].change_id]);
    expect(leaves).toHaveLength(1);
  });
});
