import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sqliteOnly } from '../helpers/backend.js';
import { openLocalStore } from '../../src/server/index.js';
import { evidenceRecord, wsPath } from '../helpers/service-requests.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'govctl-local-'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

// SQLite-only: the embedded store (`--local`) is a SQLite file in the data directory by design;
// it has no PostgreSQL form.
describe.skipIf(sqliteOnly)('openLocalStore', () => {
  it('creates the data directory (0700), provisions on first use and keeps the credentials in local.json (0600)', async () => {
    const dataDir = join(root, 'nested', 'govctl');
    const local = await openLocalStore(dataDir);
    try {
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      const file = join(dataDir, 'local.json');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(join(dataDir, 'govctl.db')).mode & 0o777).toBe(0o600);
      const saved = JSON.parse(readFileSync(file, 'utf8'));
      expect(saved).toEqual({ api_key: local.apiKey, workspace_id: local.workspaceId, org_id: local.orgId, user_id: local.userId });
      expect(local.workspaceId).toMatch(/^ws_/);
    } finally {
      await local.close();
    }
  });

  it('answers every endpoint in-process through the transport, the same application as the server', async () => {
    const local = await openLocalStore(root);
    try {
      const headers = { authorization: `Bearer ${local.apiKey}`, 'content-type': 'application/json' };
      const me = await local.transport.request({ method: 'GET', path: '/api/me', headers });
      expect(me.status).toBe(200);
      expect(JSON.parse(me.body).workspace_id).toBe(local.workspaceId);

      const body = JSON.stringify(evidenceRecord('change_event', { payload: { ...(evidenceRecord().payload as object), score: 85.0 } })).replace(
        '"score":85',
        '"score":85.0',
      );
      const written = await local.transport.request({ method: 'POST', path: wsPath(local.workspaceId, 'grc/evidence'), headers, body });
      expect(written.status).toBe(201);
      const id = JSON.parse(written.body).record_id;
      const fetched = await local.transport.request({ method: 'GET', path: wsPath(local.workspaceId, `grc/evidence/${id}`), headers });
      expect(fetched.body).toContain('"score":85.0');
      expect(fetched.headers['content-type']).toMatch(/^application\/json/);

      const dry = await local.transport.request({ method: 'POST', path: `${wsPath(local.workspaceId, 'grc/evidence')}?dry_run=true`, headers, body });
      expect(JSON.parse(dry.body).detail).toBe('dry_run');
      const list = await local.transport.request({ method: 'GET', path: `${wsPath(local.workspaceId, 'grc/evidence')}?limit=10`, headers });
      expect(JSON.parse(list.body).records).toHaveLength(1);

      const unauthorised = await local.transport.request({ method: 'GET', path: '/api/me', headers: {} });
      expect(unauthorised.status).toBe(401);
      expect(JSON.parse(unauthorised.body).error).toBe('unauthorized');
    } finally {
      await local.close();
    }
  });

  it('opens the same workspace and its records again on the next use', async () => {
    const first = await openLocalStore(root);
    const headers = { authorization: `Bearer ${first.apiKey}`, 'content-type': 'application/json' };
    await first.transport.request({ method: 'POST', path: wsPath(first.workspaceId, 'grc/evidence'), headers, body: JSON.stringify(evidenceRecord()) });
    await first.close();

    const second = await openLocalStore(root);
    try {
      expect(second.workspaceId).toBe(first.workspaceId);
      expect(second.apiKey).toBe(first.apiKey);
      const list = await second.transport.request({ method: 'GET', path: wsPath(second.workspaceId, 'grc/evidence'), headers });
      expect(JSON.parse(list.body).records).toHaveLength(1);
    } finally {
      await second.close();
    }
  });

  it('provisions again when the database was deleted', async () => {
    const first = await openLocalStore(root);
    await first.close();
    rmSync(join(root, 'govctl.db'));
    const second = await openLocalStore(root);
    try {
      expect(second.workspaceId).not.toBe(first.workspaceId);
      const me = await second.transport.request({ method: 'GET', path: '/api/me', headers: { authorization: `Bearer ${second.apiKey}` } });
      expect(me.status).toBe(200);
    } finally {
      await second.close();
    }
  });
});
