/**
 * The command line as a terminal citizen (docs/cli.md "Output"): stderr that is JSON only under --json,
 * the error codes' one list mirrored by the docs, the local-store notice once per data directory,
 * --quiet, `govctl version`, `help environment` from the table the code reads, GOVCTL_* names beside
 * SERVICE_* ones (and never a key sent with another family's URL), --timeout, and the errors for a
 * base URL that is not the service.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENVIRONMENT } from '../../src/cli/environment.js';
import { ERROR_CODES } from '../../src/cli/errors.js';
import { LOCAL_NOTICE_MARKER } from '../../src/cli/local-notice.js';
import { CLIENT_VERSION } from '../../src/client/version.js';
import { makeHome, REPO, runCli, runProcess } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** A plain HTTP server on 127.0.0.1 that answers every request with `handler`, and counts them. */
async function startPlainServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; requests: IncomingMessage[]; close(): Promise<void> }> {
  const requests: IncomingMessage[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A TCP server on 127.0.0.1 that answers every connection's first bytes with `reply` as it is. */
async function startRawServer(reply: string): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.once('data', () => socket.end(Buffer.from(reply, 'latin1')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

let service: TestServer;
beforeAll(async () => {
  service = await startTestServer({ rateLimitPerMinute: 1_000_000 });
});
afterAll(async () => {
  await service?.stop();
});

const serviceEnv = () => ({ SERVICE_BASE_URL: service.url, SERVICE_API_KEY: service.apiKey });

describe('stderr under --json', () => {
  it('holds nothing on success, not even the local-store notice', async () => {
    const result = await runCli(['evidence', 'list', '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ records: [] });
    expect(result.stderr).toBe('');
  });

  it('holds exactly one JSON object when the run fails after the local store opened', async () => {
    const result = await runCli(['evidence', 'list', '--json', '--workspace', 'ws_nobody']);
    expect(result.exitCode).toBe(78);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ error: 'not_found' });
  });

  it('carries warnings as {"warning"} lines and the error last', async () => {
    const home = makeHome();
    writeFileSync(join(home, '.govctlrc.json'), JSON.stringify({ baseURL: 'local' }));
    const result = await runCli(['evidence', 'list', '--json', '--workspace', 'ws_nobody'], { home });
    const lines = result.stderr
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, string>);
    expect(lines[0].warning).toMatch(/unknown setting "baseURL".*did you mean "baseUrl"/);
    expect(lines.at(-1)).toMatchObject({ error: 'not_found' });
    expect(lines.filter((line) => 'error' in line)).toHaveLength(1);
  });

  it('carries -v traces as {"trace"} lines', async () => {
    const result = await runCli(['whoami', '--json', '-v'], { env: serviceEnv() });
    expect(result.exitCode, result.stderr).toBe(0);
    const lines = result.stderr
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { trace: string });
    expect(lines.some((line) => /^GET .*\/api\/me authorization: Bearer \*\*\* → 200/.test(line.trace))).toBe(true);
    expect(result.stderr).not.toContain(service.apiKey);
  });
});

describe('error codes', () => {
  it('are listed in docs/cli.md exactly as ERROR_CODES defines them', () => {
    const doc = readFileSync(join(REPO, 'docs', 'cli.md'), 'utf8');
    const section = doc.slice(doc.indexOf('### Error codes'), doc.indexOf('## Exit codes'));
    const rows = [...section.matchAll(/^\| `([a-z_]+)` \| (.+) \|$/gm)].map((match) => [match[1], match[2]]);
    expect(rows).toEqual(Object.entries(ERROR_CODES));
    expect(rows.map(([code]) => code)).toContain('gates_failed');
  });

  it('include every code a run printed here', async () => {
    const printed = [
      await runCli(['evidence', 'list', '--json', '--limit', 'ten']),
      await runCli(['evidence', 'import', 'missing.ndjson', '--json']),
      await runCli(['whoami', '--json'], { env: { SERVICE_BASE_URL: service.url, SERVICE_API_KEY: 'gk_wrongwrongwrongwrongwrong0000' } }),
    ].map((result) => (JSON.parse(result.stderr.trim()) as { error: string }).error);
    expect(printed).toEqual(['usage_error', 'input_file_error', 'unauthorized']);
    for (const code of printed) expect(Object.keys(ERROR_CODES)).toContain(code);
  });
});

describe('the local-store notice', () => {
  it('is said once per data directory, remembered in a 0600 marker there', async () => {
    const home = makeHome();
    const first = await runCli(['evidence', 'list'], { home });
    expect(first.stderr).toMatch(/^govctl: using the local store in .* \(no service configured; see `govctl config init`\)\n$/);
    const marker = join(home, 'data', 'govctl', LOCAL_NOTICE_MARKER);
    expect(statSync(marker).mode & 0o777).toBe(0o600);
    const second = await runCli(['evidence', 'list'], { home });
    expect(second.exitCode).toBe(0);
    expect(second.stderr).toBe('');
    // Another data directory has not been told.
    const other = await runCli(['evidence', 'list', '--data-dir', join(home, 'other')], { home });
    expect(other.stderr).toMatch(/using the local store in/);
  });

  it('is not remembered when --json or --quiet kept it from being said', async () => {
    const home = makeHome();
    expect((await runCli(['evidence', 'list', '--json'], { home })).stderr).toBe('');
    expect((await runCli(['evidence', 'list', '--quiet'], { home })).stderr).toBe('');
    expect((await runCli(['evidence', 'list'], { home })).stderr).toMatch(/using the local store in/);
  });
});

describe('--quiet', () => {
  it('drops notices and summaries but keeps stdout, warnings and the error', async () => {
    const home = makeHome();
    const records = `${JSON.stringify({ record_type: 'change_event', system_name: 'q', payload: { type: 'deployment', by: 'ci@example.com', description: 'd', environment: 'production', system: 'q' } })}\n`;
    const loud = await runCli(['evidence', 'import', '-', '--data-dir', join(home, 'loud')], { home, input: records });
    expect(loud.stderr).toMatch(/imported 1 record/);
    const quiet = await runCli(['evidence', 'import', '-', '-q', '--data-dir', join(home, 'quiet')], { home, input: records });
    expect(quiet.exitCode, quiet.stderr).toBe(0);
    expect(quiet.stdout).toMatch(/^ok\t0\trec_/);
    expect(quiet.stderr).toBe('');

    writeFileSync(join(home, '.govctlrc.json'), JSON.stringify({ sytemName: 'x' }));
    const failed = await runCli(['evidence', 'list', '--quiet', '--workspace', 'ws_nobody', '--data-dir', join(home, 'quiet')], { home });
    expect(failed.exitCode).toBe(78);
    expect(failed.stderr).toMatch(/^govctl: warning: unknown setting "sytemName".*\ngovctl: .*404/);
  });
});

describe('govctl version', () => {
  it('prints version, commit, Node version and platform; --json as an object', async () => {
    const result = await runCli(['version', '--json']);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      version: CLIENT_VERSION,
      commit: 'unknown',
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
    });
    const piped = await runCli(['version']);
    expect(piped.stdout).toBe(`version\t${CLIENT_VERSION}\ncommit\tunknown\nnode\t${process.version}\nplatform\t${process.platform}-${process.arch}\n`);
  });

  it('names the commit the build was made from (the built command line)', async () => {
    const { execFileSync } = await import('node:child_process');
    let head = 'unknown';
    try {
      head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
    } catch {
      // not a checkout: the build says unknown
    }
    const result = await runProcess(['version', '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).commit).toBe(head);
  });
});

describe('govctl help environment', () => {
  it('lists every variable of the table, piped one per line', async () => {
    const result = await runCli(['help', 'environment']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(ENVIRONMENT.map((row) => `${row.name}\t${row.alias ?? ''}\t${row.what}\n`).join(''));
    const json = JSON.parse((await runCli(['help', 'environment', '--json'])).stdout) as { environment: { name: string }[] };
    expect(json.environment.map((row) => row.name)).toEqual(ENVIRONMENT.map((row) => row.name));
  });

  it('leaves out no variable that the command line reads', () => {
    const listed = new Set(ENVIRONMENT.flatMap((row) => [row.name, row.alias].filter((name): name is string => name !== undefined)));
    const files = [join(REPO, 'bin', 'govctl.js'), ...walk(join(REPO, 'src', 'cli'))];
    const read = new Set<string>();
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(
        /\benv(?:\?)?\.([A-Za-z_][A-Za-z0-9_]*)\b|\benv\[['"]([A-Za-z_][A-Za-z0-9_]*)['"]\]|['"]((?:SERVICE|GOVCTL)_[A-Z_]+)['"]/g,
      )) {
        read.add(match[1] ?? match[2] ?? match[3]);
      }
    }
    read.delete('GOVCTL_CLIENT');
    expect([...read].filter((name) => !listed.has(name))).toEqual([]);
    expect(read.size).toBeGreaterThan(10);
  });
});

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

describe('GOVCTL_* names beside SERVICE_* ones', () => {
  it('are read, and win when both are set', async () => {
    const result = await runCli(['config', 'show', '--json'], {
      env: { SERVICE_SYSTEM_NAME: 'from-service', GOVCTL_SYSTEM_NAME: 'from-govctl', SERVICE_WORKSPACE_ID: 'ws_service' },
    });
    const settings = JSON.parse(result.stdout).settings;
    expect(settings.systemName).toEqual({ value: 'from-govctl', source: 'env', origin: 'GOVCTL_SYSTEM_NAME' });
    expect(settings.workspaceId).toEqual({ value: 'ws_service', source: 'env', origin: 'SERVICE_WORKSPACE_ID' });
  });

  it('connect with GOVCTL_BASE_URL and GOVCTL_API_KEY beside an unrelated SERVICE_API_KEY', async () => {
    const result = await runCli(['whoami', '--json'], {
      env: { GOVCTL_BASE_URL: service.url, GOVCTL_API_KEY: service.apiKey, SERVICE_API_KEY: 'sk_some_other_service_secret_0000' },
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).workspace_id).toBe(service.workspaceId);
  });

  it('never send a SERVICE_API_KEY to GOVCTL_BASE_URL, nor GOVCTL_API_KEY to SERVICE_BASE_URL (78, nothing sent)', async () => {
    const other = await startPlainServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    try {
      const secret = 'sk_some_other_service_secret_0000';
      const mixed = await runCli(['whoami'], { env: { GOVCTL_BASE_URL: other.url, SERVICE_API_KEY: secret } });
      expect(mixed.exitCode).toBe(78);
      expect(mixed.stderr).toMatch(/base URL is from GOVCTL_BASE_URL and the API key from SERVICE_API_KEY.*set GOVCTL_API_KEY/);
      expect(mixed.stderr).not.toContain(secret);
      const reversed = await runCli(['whoami'], { env: { SERVICE_BASE_URL: other.url, GOVCTL_API_KEY: secret } });
      expect(reversed.exitCode).toBe(78);
      expect(other.requests).toHaveLength(0);
    } finally {
      await other.close();
    }
  });
});

describe('--timeout', () => {
  it('bounds every request (a service that never answers fails with 69 after it), and is checked as a flag (64)', async () => {
    const silent = await startPlainServer(() => undefined);
    try {
      const result = await runCli(['whoami', '--timeout', '200ms'], { env: { SERVICE_BASE_URL: silent.url, SERVICE_API_KEY: service.apiKey } });
      expect(result.exitCode).toBe(69);
      expect(result.stderr).toMatch(/no reply within 0\.2 s/);
      const fromEnv = await runCli(['whoami'], { env: { SERVICE_BASE_URL: silent.url, SERVICE_API_KEY: service.apiKey, GOVCTL_TIMEOUT: '0.2' } });
      expect(fromEnv.exitCode).toBe(69);
      expect(fromEnv.stderr).toMatch(/no reply within 0\.2 s/);
    } finally {
      await silent.close();
    }
    const bad = await runCli(['whoami', '--timeout', 'soon']);
    expect(bad.exitCode).toBe(64);
    expect(bad.stderr).toMatch(/--timeout must be seconds or a duration/);
    expect((await runCli(['whoami'], { env: { GOVCTL_TIMEOUT: 'soon' } })).exitCode).toBe(78);
  });
});

describe('a base URL that is not the governance service', () => {
  it('says that nothing there answers like the service: the URL tried, the status and content type, sanitised', async () => {
    // Raw bytes: a C1 CSI (0x9b, which HTTP parsers pass as obs-text) in the content type.
    const web = await startRawServer(
      'HTTP/1.1 404 Not Found\r\ncontent-type: text/html\x9b2J; charset=utf-8\r\ncontent-length: 18\r\nconnection: close\r\n\r\n<h1>Not Found</h1>',
    );
    try {
      const result = await runCli(['whoami'], { env: { SERVICE_BASE_URL: web.url, SERVICE_API_KEY: service.apiKey } });
      expect(result.exitCode).toBe(69);
      expect(result.stderr).not.toMatch(/workspace id is not set/);
      expect(result.stderr).toContain(`govctl: nothing at ${web.url} answers like a governance service: GET ${web.url}/api/me answered 404 text/html`);
      expect(result.stderr).not.toContain('\x9b');
      expect(result.stderr).toContain('text/html\\x9b2j');
      const json = await runCli(['evidence', 'list', '--json'], { env: { SERVICE_BASE_URL: web.url, SERVICE_API_KEY: service.apiKey } });
      expect(json.exitCode).toBe(69);
      expect(JSON.parse(json.stderr)).toMatchObject({ error: 'malformed_response' });
    } finally {
      await web.close();
    }
  });

  it('says so for a wrong path in front of the real service too', async () => {
    const result = await runCli(['evidence', 'list'], { env: { SERVICE_BASE_URL: `${service.url}/governance`, SERVICE_API_KEY: service.apiKey } });
    expect(result.exitCode).toBe(69);
    expect(result.stderr).toContain(
      `nothing at ${service.url}/governance answers like a governance service: GET ${service.url}/governance/api/me answered 404`,
    );
  });

  it("translates an https:// URL that reaches plain HTTP instead of printing OpenSSL's words", async () => {
    const https = service.url.replace(/^http:/, 'https:');
    const result = await runCli(['whoami'], { env: { SERVICE_BASE_URL: https, SERVICE_API_KEY: service.apiKey } });
    expect(result.exitCode).toBe(69);
    expect(result.stderr).toBe(`govctl: the server at ${https} speaks plain HTTP, not HTTPS; use ${service.url} or check the port\n`);
  });
});
