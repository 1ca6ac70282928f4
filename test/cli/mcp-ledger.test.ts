/**
 * The transparency-log tools of `govctl mcp` (ledger_checkpoint, ledger_prove) against a real
 * service on 127.0.0.1 with a log key and a real database file: one `govctl mcp` spawned over
 * stdio with the key pinned, and the other cases in-process (the same MCP server, linked to the
 * SDK's client in memory), so that the service can be restarted under another key.
 * Integration is manual (the test integrates the log), so nothing waits on the wall clock.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Database } from '../../src/server/store/sqlite/driver.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { createLedgerKey, ledgerKeyPath, provision, readLedgerKey, startServer, type RunningServer } from '../../src/server/index.js';
import { BIN, cleanEnv, ensureBuilt, makeHome } from '../helpers/cli.js';
import { connectMcpInProcess, type ToolResult } from '../helpers/mcp.js';
import { startTestServer } from '../helpers/server.js';

/** ajv-formats is CommonJS: its plugin is the module's `default` member under Node's ESM interop. */
const addFormats = addFormatsModule.default;

const dirs: string[] = [];
const running: RunningServer[] = [];

interface Service {
  url: string;
  port: number;
  apiKey: string;
  workspaceId: string;
  dbPath: string;
  server: RunningServer;
}

/** A service on 127.0.0.1 over a new database file with a log key beside it; the log integrates when the test says. */
async function newService(port = 0, dbPath?: string, identity?: { api_key: string; workspace_id: string }): Promise<Service> {
  if (dbPath === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'govctl-mcp-ledger-'));
    dirs.push(dir);
    dbPath = join(dir, 'server.db');
  }
  identity ??= await provision(dbPath, { orgName: 'o', workspaceName: 'w' });
  try {
    createLedgerKey(ledgerKeyPath(dbPath));
  } catch {
    // the key file exists (a restart): the caller replaced it on purpose or keeps it
  }
  const server = await startServer({
    host: '127.0.0.1',
    port,
    db: dbPath,
    ledger: { key: readLedgerKey(ledgerKeyPath(dbPath)), integration: 'manual' },
  });
  running.push(server);
  return { url: server.url, port: Number(new URL(server.url).port), apiKey: identity.api_key, workspaceId: identity.workspace_id, dbPath, server };
}

async function integrate(service: Service): Promise<void> {
  await service.server.service.store.ledger.integrate();
}

/** The key the service states, over a connection of its own (a restarted service closes pooled ones). */
async function logKey(service: Service): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = httpGet(
      `${service.url}/api/workspaces/${service.workspaceId}/governance/ledger/key`,
      { agent: false, headers: { authorization: `Bearer ${service.apiKey}` } },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve(body.trim()));
      },
    );
    request.on('error', reject);
  });
}

afterAll(async () => {
  for (const server of running.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('govctl mcp ledger tools over stdio, with the log key pinned', () => {
  let service: Service;
  let client: Client;
  let stderr = '';
  const call = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as ToolResult;

  beforeAll(async () => {
    await ensureBuilt();
    service = await newService();
    const home = makeHome();
    const env = { SERVICE_BASE_URL: service.url, SERVICE_API_KEY: service.apiKey, SERVICE_SYSTEM_NAME: 'mcp-ledger', GOVCTL_LEDGER_KEY: await logKey(service) };
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], env: cleanEnv(home, env), cwd: home, stderr: 'pipe' });
    transport.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    client = new Client({ name: 'govctl-test', version: '1.0.0' });
    await client.connect(transport);
  });

  afterAll(async () => {
    await client?.close();
  });

  it('lists ledger_checkpoint and ledger_prove with valid input schemas that accept their examples', async () => {
    const { tools } = await client.listTools();
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(ajv);
    for (const name of ['ledger_checkpoint', 'ledger_prove']) {
      const tool = tools.find((candidate) => candidate.name === name);
      expect(tool, name).toBeDefined();
      expect(ajv.validateSchema(tool!.inputSchema), `${name}: ${ajv.errorsText(ajv.errors)}`).toBe(true);
      const validate = ajv.compile(tool!.inputSchema);
      for (const example of (tool!.inputSchema as { examples?: unknown[] }).examples ?? []) expect(validate(example), name).toBe(true);
      expect(tool!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    }
    expect((tools.find((tool) => tool.name === 'ledger_prove')!.inputSchema as { required: string[] }).required).toEqual(['id']);
  });

  it('returns the ledger_index of every write, and ledger_prove proves that leaf against the checkpoint ledger_checkpoint verified', async () => {
    const stored = await call('record_change_event', { type: 'deployment', by: 'ci@example.com', description: 'v2.3', environment: 'production' });
    expect(stored.isError, stored.content[0].text).toBeFalsy();
    const attested = await call('push_attestation', { tool_name: 'summarise', input_text: 'in', output_text: 'out' });
    expect(attested.isError, attested.content[0].text).toBeFalsy();
    const recordIndex = stored.structuredContent!.ledger_index;
    const attestationIndex = attested.structuredContent!.ledger_index;
    expect(typeof recordIndex).toBe('number');
    expect(attestationIndex).toBe((recordIndex as number) + 1);
    await integrate(service);

    const checkpoint = await call('ledger_checkpoint');
    expect(checkpoint.isError, checkpoint.content[0].text).toBeFalsy();
    const head = checkpoint.structuredContent!;
    expect(head).toMatchObject({
      origin: `govctl.local/ledger/${service.workspaceId}`,
      tree_size: (attestationIndex as number) + 1,
      verified: true,
      log_key: { trust: 'pinned', verifier_key: await logKey(service) },
    });
    expect(head.log_key).not.toHaveProperty('caution');
    expect(String(head.note).split('\n').slice(0, 3)).toEqual([head.origin, String(head.tree_size), head.root_hash]);

    for (const [id, index, kind] of [
      [stored.structuredContent!.record_id, recordIndex, 'evidence'],
      [attested.structuredContent!.attestation_id, attestationIndex, 'attestation'],
    ]) {
      const proved = await call('ledger_prove', { id });
      expect(proved.isError, proved.content[0].text).toBeFalsy();
      expect(proved.structuredContent).toMatchObject({
        id,
        kind,
        leaf_index: index,
        tree_size: head.tree_size,
        root_hash: head.root_hash,
        verified: true,
        log_key: { trust: 'pinned' },
      });
      expect(proved.structuredContent!.proven).toMatch(
        new RegExp(
          `^${String(kind)} ${String(id)}, exactly as the service returns it now, is leaf ${String(index)} of the log's tree of size ${String(head.tree_size)}, whose root the pinned log key signed$`,
        ),
      );
    }
  });

  it('names a record whose member was changed in the database file as a tool error, and an id the log does not hold', async () => {
    const stored = await call('record_change_event', { type: 'deployment', by: 'ci@example.com', description: 'v2.4', environment: 'production' });
    const id = stored.structuredContent!.record_id as string;
    await integrate(service);
    expect((await call('ledger_prove', { id })).isError).toBeFalsy();

    const db = new Database(service.dbPath);
    try {
      expect(db.prepare("UPDATE evidence SET identity = 'mallory@example.com' WHERE record_id = ?").run(id).changes).toBe(1);
    } finally {
      db.close();
    }
    const tampered = await call('ledger_prove', { id });
    expect(tampered.isError).toBe(true);
    expect(tampered.structuredContent).toMatchObject({ error: 'ledger_check_failed' });
    expect(tampered.content[0].text).toMatch(
      new RegExp(
        `^evidence ${id} as the service returns it is not what the log committed to at leaf ${String(stored.structuredContent!.ledger_index)} \\(sha256 [0-9a-f]{64}, the entry says [0-9a-f]{64}\\): the stored record was changed`,
      ),
    );

    const unknown = await call('ledger_prove', { id: 'rec_not_logged' });
    expect(unknown.structuredContent).toMatchObject({ error: 'ledger_check_failed' });
    expect(unknown.content[0].text).toMatch(/the log holds no entry for rec_not_logged/);
    const missing = await call('ledger_prove', {});
    expect(missing.structuredContent).toMatchObject({ error: 'usage_error', field: 'id' });
    expect(stderr).toMatch(/govctl: mcp: ledger_prove: error ledger_check_failed\n/);
  });
});

describe('govctl mcp ledger tools in-process', () => {
  it('answer a malformed pinned key and a service without a log key with tool errors that say what to do', async () => {
    const service = await newService();
    const malformed = await connectMcpInProcess({ SERVICE_BASE_URL: service.url, SERVICE_API_KEY: service.apiKey, GOVCTL_LEDGER_KEY: 'not-a-key' });
    try {
      const result = await malformed.call('ledger_checkpoint');
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: 'config_error', field: 'ledgerKey' });
      expect(result.content[0].text).toMatch(/^GOVCTL_LEDGER_KEY is not a log verifier key/);
    } finally {
      await malformed.close();
    }
    const unsigned = await startTestServer();
    const keyless = await connectMcpInProcess({ SERVICE_BASE_URL: unsigned.url, SERVICE_API_KEY: unsigned.apiKey });
    try {
      const result = await keyless.call('ledger_prove', { id: 'rec_x' });
      expect(result.isError).toBe(true);
      expect(result.content[0].text).toMatch(/503 service_unavailable: this service has no log key/);
    } finally {
      await keyless.close();
      await unsigned.stop();
    }
  });

  it('trust the key the service states on first use, say so, and refuse another key later in the session', async () => {
    const first = await newService();
    const { call, close } = await connectMcpInProcess({ SERVICE_BASE_URL: first.url, SERVICE_API_KEY: first.apiKey });
    try {
      const stored = await call('record_change_event', {
        type: 'deployment',
        by: 'ci@example.com',
        description: 'x',
        environment: 'production',
        system_name: 'tofu',
      });
      await integrate(first);
      const proved = await call('ledger_prove', { id: stored.structuredContent!.record_id });
      expect(proved.isError, proved.content[0].text).toBeFalsy();
      expect(proved.structuredContent).toMatchObject({
        leaf_index: stored.structuredContent!.ledger_index,
        log_key: { trust: 'first_use', verifier_key: await logKey(first) },
      });
      expect(proved.structuredContent!.proven).toMatch(/whose root the first-use log key signed$/);
      expect((proved.structuredContent!.log_key as { caution: string }).caution).toMatch(/no log key is pinned/);

      // The operator (or whoever holds the database) restarts the service under another key, same address.
      const oldKey = await logKey(first);
      await first.server.close();
      rmSync(ledgerKeyPath(first.dbPath));
      const second = await newService(first.port, first.dbPath, { api_key: first.apiKey, workspace_id: first.workspaceId });
      expect(await logKey(second)).not.toBe(oldKey);
      const refused = await call('ledger_checkpoint');
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({ error: 'ledger_check_failed' });
      expect(refused.content[0].text).toMatch(/^the service now states the log key \S+, not \S+ which it stated first in this session; the log key changed/);
    } finally {
      await close();
    }
  });
});
