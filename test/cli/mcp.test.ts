/**
 * `govctl mcp` end to end: the built command line spawned as an MCP server over stdio (and once
 * over Streamable HTTP), driven by the SDK's own client against a real service on 127.0.0.1 (a
 * real SQLite file). One MCP process per describe block; every result and all of stderr are kept
 * and searched for the API key and the signing key at the end.
 */
import { execFileSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { execa, type ResultPromise } from 'execa';
import { CATALOGUE, RECORD_TYPES } from '../../src/core/index.js';
import { recordFlags } from '../../src/cli/record-flags.js';
import { main } from '../../src/cli/main.js';
import { createMemoryIO } from '../../src/cli/io.js';
import { BIN, cleanEnv, codeCacheEnv, ensureBuilt, makeHome, REPO } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { python } from '../helpers/python.js';

/** ajv-formats is CommonJS: its plugin is the module's `default` member under Node's ESM interop. */
const addFormats = addFormatsModule.default;

const SIGNING_KEY = '7c'.repeat(32);

type ToolResult = { isError?: boolean; content: { type: string; text: string }[]; structuredContent?: Record<string, unknown> };

/** An MCP client connected to `govctl mcp` spawned with `env`; stderr and every result are kept. */
async function connect(env: Record<string, string>, args: string[] = ['mcp']) {
  const home = makeHome();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, ...args],
    env: cleanEnv(home, { ...codeCacheEnv(), ...env }),
    cwd: home,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'govctl-test', version: '1.0.0' });
  await client.connect(transport);
  const results: string[] = [];
  const call = async (name: string, args: Record<string, unknown> = {}): Promise<ToolResult> => {
    const result = (await client.callTool({ name, arguments: args })) as ToolResult;
    results.push(JSON.stringify(result));
    return result;
  };
  return { client, transport, call, results, stderr: () => stderr, home };
}

/** A port on 127.0.0.1 that nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** SHA-256 of UTF-8 text by an independent implementation (Python's hashlib). */
function pythonSha256(text: string): string {
  return execFileSync(python(), ['-c', 'import hashlib,sys; print(hashlib.sha256(sys.argv[1].encode("utf-8")).hexdigest())', text], {
    encoding: 'utf8',
  }).trim();
}

/** client_sig by an independent implementation: HMAC-SHA256 over Python's sorted, compact json.dumps of the five members. */
function pythonClientSig(record: Record<string, unknown>, workspaceId: string, keyHex: string): string {
  const members = {
    occurred_at: record.occurred_at,
    payload: record.payload,
    record_type: record.record_type,
    system_name: record.system_name,
    workspace_id: workspaceId,
  };
  const script =
    'import hashlib,hmac,json,sys; m=json.loads(sys.stdin.read()); print(hmac.new(bytes.fromhex(sys.argv[1]), json.dumps(m, sort_keys=True, separators=(",", ":")).encode(), hashlib.sha256).hexdigest())';
  return execFileSync(python(), ['-c', script, keyHex], { input: JSON.stringify(members), encoding: 'utf8' }).trim();
}

let server: TestServer;

beforeAll(async () => {
  await ensureBuilt();
  server = await startTestServer({ rateLimitPerMinute: 1_000_000 });
});

afterAll(async () => {
  await server?.stop();
});

describe('govctl mcp over stdio against a real service, signing', () => {
  let mcp: Awaited<ReturnType<typeof connect>>;
  let env: Record<string, string>;

  beforeAll(async () => {
    env = { SERVICE_BASE_URL: server.url, SERVICE_API_KEY: server.apiKey, SERVICE_SIGNING_KEY: SIGNING_KEY, SERVICE_SYSTEM_NAME: 'mcp-signed' };
    mcp = await connect(env);
  });

  afterAll(async () => {
    await mcp?.client.close();
  });

  it('lists a tool per record type whose input schema is valid JSON Schema, generated from the catalogue', async () => {
    const { tools } = await mcp.client.listTools();
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(ajv);
    for (const tool of tools) {
      expect(ajv.validateSchema(tool.inputSchema), `${tool.name}: ${ajv.errorsText(ajv.errors)}`).toBe(true);
      const validate = ajv.compile(tool.inputSchema);
      // Each tool's own example is accepted by its schema.
      for (const example of (tool.inputSchema as { examples?: unknown[] }).examples ?? [])
        expect(validate(example), `${tool.name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
    const names = tools.map((tool) => tool.name);
    for (const type of RECORD_TYPES) {
      const tool = tools.find((candidate) => candidate.name === `record_${type}`);
      expect(tool, type).toBeDefined();
      const schema = tool!.inputSchema as { properties: Record<string, { description?: string; enum?: string[] }>; required: string[] };
      // Required members and enums are the CLI flags' (the same catalogue bindings).
      const spec = CATALOGUE.get(type)!;
      const requiredFields = recordFlags(spec)
        .bindings.filter((binding) => binding.kind === 'field' && binding.required && !binding.global)
        .map((binding) => (binding.kind === 'field' ? binding.field.wire : ''));
      for (const wire of requiredFields) expect(schema.required, `${type}.${wire}`).toContain(wire);
      for (const field of spec.fields.filter((candidate) => candidate.enum && !candidate.fixed)) {
        const property = schema.properties[field.wire] as { enum?: string[]; items?: { enum?: string[] } };
        expect(field.kind === 'string[]' ? property.items?.enum : property.enum, `${type}.${field.wire}`).toEqual(field.enum);
      }
      expect(schema.properties.dry_run).toMatchObject({ type: 'boolean' });
    }
    expect(names).toEqual(
      expect.arrayContaining([
        'whoami',
        'list_evidence',
        'get_evidence',
        'push_attestation',
        'get_posture',
        'list_systems',
        'check_gates',
        'derive_controls',
        'list_gate_policies',
      ]),
    );
  });

  it('never defaults art5_self_assessment and asks for the human who confirmed it', async () => {
    const { tools } = await mcp.client.listTools();
    const tool = tools.find((candidate) => candidate.name === 'record_ai_risk_assessment')!;
    const schema = tool.inputSchema as { properties: Record<string, Record<string, unknown>>; required: string[] };
    expect(schema.properties.art5_self_assessment).not.toHaveProperty('default');
    expect(schema.properties.art5_self_assessment.description).toMatch(/HUMAN must confirm/);
    expect(schema.required).toEqual(expect.arrayContaining(['art5_self_assessment', 'art5_confirmed_by']));
    expect(tool.description).toMatch(/confirmed by a human/);

    const base = {
      risk_level: 'minimal',
      risk_summary: 'FAQ bot',
      intended_purpose: 'answer questions',
      impact_domains: ['support'],
      assessor: 'alice@example.com',
    };
    const missing = await mcp.call('record_ai_risk_assessment', { ...base, art5_confirmed_by: 'alice@example.com' });
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent).toMatchObject({ field: 'art5_self_assessment' });
    const unconfirmed = await mcp.call('record_ai_risk_assessment', { ...base, art5_self_assessment: true });
    expect(unconfirmed.isError).toBe(true);
    expect(unconfirmed.structuredContent).toMatchObject({ field: 'art5_confirmed_by' });
    const confirmed = await mcp.call('record_ai_risk_assessment', {
      ...base,
      art5_self_assessment: true,
      art5_confirmed_by: 'alice@example.com',
      system_name: 'mcp-art5',
    });
    expect(confirmed.isError).toBeFalsy();
    expect(confirmed.structuredContent).toMatchObject({
      stored: true,
      art5_confirmed_by: 'alice@example.com',
      record: { payload: { art5_self_assessment: true } },
    });
  });

  it("dry-runs every record type with its schema's example and stores nothing", async () => {
    const { tools } = await mcp.client.listTools();
    const before = await mcp.call('list_evidence', { system_name: 'loan-scorer' });
    expect(before.structuredContent).toMatchObject({ records: [] });
    for (const type of RECORD_TYPES) {
      const example = (tools.find((tool) => tool.name === `record_${type}`)!.inputSchema as unknown as { examples: Record<string, unknown>[] }).examples[0];
      const result = await mcp.call(`record_${type}`, { ...example, dry_run: true });
      expect(result.isError, `${type}: ${result.content[0].text}`).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ record_type: type, detail: 'dry_run', stored: false });
      expect((result.structuredContent!.mapped_controls as string[]).length, type).toBeGreaterThan(0);
    }
    const after = await mcp.call('list_evidence', { system_name: 'loan-scorer' });
    expect(after.structuredContent).toMatchObject({ records: [] });
  });

  it('stores signed evidence that `govctl evidence verify --remote` verifies, and returns what was stored', async () => {
    const stored = await mcp.call('record_change_event', { type: 'deployment', by: 'ci@example.com', description: 'v2.3', environment: 'production' });
    expect(stored.isError).toBeFalsy();
    const body = stored.structuredContent!;
    expect(body).toMatchObject({
      record_type: 'change_event',
      stored: true,
      signature: { client_sig: true, client_sig_algo: 'hmac-sha256' },
      record: { system_name: 'mcp-signed', payload: { system: 'mcp-signed' } },
    });
    expect(body.record_id).toMatch(/^rec_/);
    expect(body.mapped_controls).toEqual(expect.arrayContaining(['SOC2_CC8_1']));

    const listed = await mcp.call('list_evidence', { system_name: 'mcp-signed' });
    // Stored as an agent's record, told apart from what a person typed with the CLI.
    expect((listed.structuredContent!.records as { record_id: string; signed: boolean }[]).find((item) => item.record_id === body.record_id)).toMatchObject({
      signed: true,
      source: 'agent',
    });
    const fetched = await mcp.call('get_evidence', { record_id: body.record_id });
    expect(fetched.structuredContent).toMatchObject({ signature: 'valid', record: { record_id: body.record_id } });
    // The stored client_sig is the HMAC-SHA256 of spec §5.1 as Python computes it from the text of the specification.
    const asStored = fetched.structuredContent!.record as Record<string, unknown>;
    expect(asStored.client_sig).toBe(pythonClientSig(asStored, server.workspaceId, SIGNING_KEY));

    const io = createMemoryIO();
    const code = await main(['evidence', 'verify', '--remote', '--system', 'mcp-signed'], { io, env: cleanEnv(makeHome(), env), cwd: REPO });
    expect(io.stderrText()).toBe('govctl: checked 1 stored record (all time)\n');
    expect(code).toBe(0);
    expect(io.stdoutText()).toMatch(new RegExp(`^valid\\t0\\tchange_event\\tmcp-signed\\t${body.record_id}\\n$`));
  });

  it('hashes attestation text locally (SHA-256 as Python computes it), signs it, and the service verifies the signature', async () => {
    const input = 'the prompt, with ünïcode';
    const output = 'the answer';
    const result = await mcp.call('push_attestation', { tool_name: 'summarise', input_text: input, output_text: output, model_id: 'gpt-4o' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      external_verified: true,
      signature: { witness_sig: true },
      record: { input_hash: pythonSha256(input), output_hash: pythonSha256(output), system_name: 'mcp-signed', tool_name: 'summarise' },
    });
    expect(result.structuredContent!.attestation_id).toMatch(/^att_/);
    // The text itself never leaves: not in the result, not in the log.
    expect(JSON.stringify(result)).not.toContain(input);
    expect(mcp.stderr()).not.toContain(input);

    const both = await mcp.call('push_attestation', { tool_name: 'x', input_text: 'a', input_hash: 'ab'.repeat(32), output_text: 'b' });
    expect(both.isError).toBe(true);
    expect(both.structuredContent).toMatchObject({ field: 'input_hash' });
  });

  it('answers every read tool from the service', async () => {
    const me = await mcp.call('whoami');
    expect(me.structuredContent).toMatchObject({
      workspace_id: server.workspaceId,
      user_id: server.userId,
      connection: { kind: 'service', base_url: server.url },
      system_name: 'mcp-signed',
      signing_key_configured: true,
    });

    const posture = await mcp.call('get_posture');
    expect(posture.structuredContent).toMatchObject({ frameworks: expect.any(Array), failing_gates: expect.any(Array) });

    const systems = await mcp.call('list_systems', { name: 'mcp-signed' });
    expect(systems.structuredContent).toMatchObject({ systems: [{ system_name: 'mcp-signed' }] });

    const derived = await mcp.call('derive_controls', { description: 'Scores loan applications with the OpenAI API; deployed via CI', risk_tier: 'high' });
    expect((derived.structuredContent!.recommendations as { record_type: string }[]).map((r) => r.record_type)).toContain('ai_risk_assessment');

    const policies = await mcp.call('list_gate_policies');
    expect((policies.structuredContent!.policies as { framework: string }[]).map((p) => p.framework)).toEqual([
      'eu_ai_act',
      'iso_42001',
      'soc2_type2',
      'iso_27001',
      'nist_airf',
    ]);
  });

  it('gives the same 0/1/2 verdict as `govctl gates check`, as a result rather than an error', async () => {
    const gates = await mcp.call('check_gates');
    expect(gates.isError).toBeFalsy();
    const io = createMemoryIO();
    const exitCode = await main(['gates', 'check', '--json'], { io, env: cleanEnv(makeHome(), env), cwd: REPO });
    expect(gates.structuredContent!.verdict).toBe(exitCode);
    expect([1, 2]).toContain(exitCode); // a workspace with a few records fails its gates
    const never = await mcp.call('check_gates', { fail_on: 'never' });
    expect(never.structuredContent).toMatchObject({ verdict: 0, gates_verdict: exitCode });
  });

  it('reports invalid arguments as tool errors naming the argument', async () => {
    const badEnum = await mcp.call('record_ai_risk_assessment', { risk_level: 'extreme' });
    expect(badEnum.isError).toBe(true);
    expect(badEnum.content[0].text).toMatch(/risk_level/);
    expect(badEnum.content[0].text).toMatch(/one of: unacceptable, high, limited, minimal/);

    const unknown = await mcp.call('record_change_event', {
      type: 'deployment',
      by: 'ci@example.com',
      description: 'x',
      environment: 'production',
      colour: 'red',
    });
    expect(unknown.structuredContent).toMatchObject({ error: 'usage_error', field: 'colour' });

    const wrongType = await mcp.call('list_evidence', { days: 'thirty' });
    expect(wrongType.structuredContent).toMatchObject({ field: 'days' });

    // A rule of the catalogue beyond the schema: Annex III is required when the risk is high.
    const rule = await mcp.call('record_ai_risk_assessment', {
      risk_level: 'high',
      risk_summary: 's',
      intended_purpose: 'p',
      impact_domains: ['credit'],
      art5_self_assessment: false,
      art5_confirmed_by: 'alice@example.com',
      assessor: 'alice@example.com',
    });
    expect(rule.structuredContent).toMatchObject({ error: 'validation_error', field: 'annex_iii_category' });

    const noTool = await mcp.call('record_everything');
    expect(noTool.isError).toBe(true);
    expect(noTool.content[0].text).toMatch(/there is no tool record_everything; the tools are: whoami/);
  });

  it('offers the posture as a resource and a prompt from registration to passing gates', async () => {
    const { resources } = await mcp.client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(['govctl://posture', 'govctl://record-types']);
    const posture = await mcp.client.readResource({ uri: 'govctl://posture' });
    expect(JSON.parse((posture.contents[0] as { text: string }).text)).toMatchObject({ overall_pct: expect.any(Number) });
    const guide = await mcp.client.readResource({ uri: 'govctl://record-types' });
    for (const type of RECORD_TYPES) expect((guide.contents[0] as { text: string }).text).toContain(`record_${type}`);
    const prompt = await mcp.client.getPrompt({ name: 'onboard_system', arguments: { system_name: 'loan-scorer', risk_tier: 'high' } });
    const text = (prompt.messages[0].content as { text: string }).text;
    expect(text).toMatch(/art5_confirmed_by/);
    expect(text).toMatch(/check_gates/);
  });

  it('never shows the API key or the signing key in a result or on stderr', async () => {
    // Provoke an error path too: a record that fails on the service's side is not possible with
    // valid input, so an unknown record id (404 from the service) stands in.
    const missing = await mcp.call('get_evidence', { record_id: 'rec_does_not_exist' });
    expect(missing.structuredContent).toMatchObject({ error: 'not_found', field: 'record_id', hint: 'list_evidence gives the ids of stored records' });
    expect(mcp.results.length).toBeGreaterThan(25);
    for (const text of [...mcp.results, mcp.stderr()]) {
      expect(text).not.toContain(server.apiKey);
      expect(text).not.toContain(SIGNING_KEY);
    }
    // The log has one line per call and says nothing else about the arguments.
    expect(mcp.stderr()).toMatch(/govctl: mcp: record_change_event: ok\n/);
  });
});

describe('govctl mcp with the service down', () => {
  let mcp: Awaited<ReturnType<typeof connect>>;

  beforeAll(async () => {
    mcp = await connect({ SERVICE_BASE_URL: `http://127.0.0.1:${await closedPort()}`, SERVICE_API_KEY: 'gk_down_secret_key_1234' });
  });

  afterAll(async () => {
    await mcp?.client.close();
  });

  it('answers with a tool error that says what to check, and keeps serving', async () => {
    const first = await mcp.call('get_posture');
    expect(first.isError).toBe(true);
    expect(first.structuredContent).toMatchObject({ error: 'network_error' });
    expect(first.content[0].text).toMatch(/check the base URL \(--base-url or SERVICE_BASE_URL\) and that the service is running/);
    const second = await mcp.call('record_change_event', {
      type: 'deployment',
      by: 'ci@example.com',
      description: 'x',
      environment: 'production',
      system_name: 's',
    });
    expect(second.isError).toBe(true);
    const { tools } = await mcp.client.listTools();
    expect(tools.length).toBeGreaterThan(11);
    for (const text of [...mcp.results, mcp.stderr()]) expect(text).not.toContain('gk_down_secret_key_1234');
  });
});

describe('govctl mcp --http', () => {
  let child: ResultPromise | undefined;

  afterAll(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('serves the tools over Streamable HTTP on 127.0.0.1, refuses other origins, and stops on SIGTERM with 0', async () => {
    const home = makeHome();
    child = execa(process.execPath, [BIN, 'mcp', '--http', '0'], {
      env: cleanEnv(home, { ...codeCacheEnv(), SERVICE_BASE_URL: server.url, SERVICE_API_KEY: server.apiKey }),
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: 30_000,
    });
    let stderr = '';
    const url = await new Promise<string>((resolve, reject) => {
      child!.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        const found = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr);
        if (found) resolve(found[1]);
      });
      void child!.then(() => reject(new Error(`exited: ${stderr}`)));
    });
    const client = new Client({ name: 'govctl-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const me = (await client.callTool({ name: 'whoami', arguments: {} })) as ToolResult;
    expect(me.structuredContent).toMatchObject({ workspace_id: server.workspaceId });
    await client.close();

    const foreign = await fetch(url, {
      method: 'POST',
      headers: { origin: 'http://evil.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(foreign.status).toBe(403);
    expect(await foreign.text()).not.toContain('evil.example');
    // A name that resolves here but is not this server's (DNS rebinding) is refused too.
    const rebound = await new Promise<number>((resolve, reject) => {
      const target = new URL(url);
      const request = httpRequest(
        {
          host: '127.0.0.1',
          port: target.port,
          path: '/mcp',
          method: 'POST',
          headers: { host: `rebind.example:${target.port}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      );
      request.on('error', reject);
      request.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    });
    expect(rebound).toBe(403);

    // stateless: no server stream to open (GET) and no session to end (DELETE), answered at once
    for (const method of ['GET', 'DELETE']) {
      const answer = await fetch(url, { method, headers: { accept: 'text/event-stream' }, signal: AbortSignal.timeout(5_000) });
      expect(answer.status, method).toBe(405);
      expect(answer.headers.get('allow')).toBe('POST');
      await answer.body?.cancel();
    }

    child.kill('SIGTERM');
    const ended = await child;
    expect(ended.exitCode).toBe(0);
    expect(stderr + String(ended.stderr)).not.toContain(server.apiKey);
  });
});

describe('govctl mcp settings', () => {
  it('with nothing configured serves the local store, writes only protocol messages on stdout, and exits 0 when stdin closes', async () => {
    const home = makeHome();
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
    ];
    const run = await execa(process.execPath, [BIN, 'mcp'], {
      env: cleanEnv(home, codeCacheEnv()),
      extendEnv: false,
      reject: false,
      cwd: home,
      input: lines.map((line) => JSON.stringify(line)).join('\n') + '\n',
      timeout: 30_000,
    });
    expect(run.exitCode).toBe(0);
    const messages = String(run.stdout)
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: number; result: { structuredContent?: Record<string, unknown> } });
    expect(messages.map((message) => message.id)).toEqual([1, 2]);
    expect(messages[1].result.structuredContent).toMatchObject({ connection: { kind: 'local_store' } });
    expect(String(run.stderr)).toMatch(/govctl: using the local store in/);
  });

  it('starts with settings that do not load, and every tool says what to configure', async () => {
    const mcp = await connect({ SERVICE_API_KEY: 'gk_orphan_secret_key_5678' });
    try {
      const result = await mcp.call('whoami');
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: 'config_error', field: 'baseUrl' });
      expect(result.content[0].text).toMatch(/SERVICE_BASE_URL is required with an API key; set SERVICE_BASE_URL/);
      expect(mcp.stderr()).toMatch(/govctl: mcp: warning: the settings do not load \(SERVICE_BASE_URL is required/);
      for (const text of [...mcp.results, mcp.stderr()]) expect(text).not.toContain('gk_orphan_secret_key_5678');
    } finally {
      await mcp.client.close();
    }
  });

  it("never shows the base URL's query, in whoami's result or in the start notice", async () => {
    const mcp = await connect({ SERVICE_BASE_URL: `${server.url}/?token=query_secret_91`, SERVICE_API_KEY: server.apiKey });
    try {
      const me = await mcp.call('whoami');
      expect(me.isError).toBeFalsy();
      expect(me.structuredContent).toMatchObject({ workspace_id: server.workspaceId, connection: { kind: 'service', base_url: `${server.url}/?***` } });
      expect(mcp.stderr()).toMatch(new RegExp(`govctl: mcp: serving stdio for ${server.url.replace(/\./g, '\\.')}/\\?\\*\\*\\*`));
      for (const text of [...mcp.results, mcp.stderr()]) expect(text).not.toContain('query_secret_91');
    } finally {
      await mcp.client.close();
    }
  });

  it('refuses a key from stdin, which carries the protocol (64)', async () => {
    const io = createMemoryIO();
    const code = await main(['--api-key-file', '-', 'mcp'], { io, env: cleanEnv(makeHome()), cwd: REPO });
    expect(code).toBe(64);
    expect(io.stderrText()).toMatch(/reads the protocol from stdin/);
    expect(io.stdoutText()).toBe('');
  });
});
