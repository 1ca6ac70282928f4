/**
 * Everything a service supplies is untrusted when printed to a terminal (docs/security.md
 * "Terminal output and local files"): a hostile server on 127.0.0.1 sends ESC sequences, C1
 * controls and bidi overrides in system names, records and error messages; tables, piped lines and
 * error output show them as visible escapes, and --json keeps them exactly. A base URL is never
 * printed with its userinfo or query string.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryIO } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { displayUrl, terminalText } from '../../src/cli/terminal-text.js';
import { startFaultServer, type FaultServer } from '../helpers/fault-server.js';

const API_KEY = 'gk_TerminalTerminalTerminalTermin1234';

/** Every hostile character class: CSI, OSC (title, clipboard), C1 CSI, BEL, CR, bidi overrides and isolates, marks. */
const HOSTILE = 'loan\x1b[2J\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07\x9b31m\r\u202eredacs\u202c\u2066x\u2069\u200e\u200f\u061c\x00end';
const FORBIDDEN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

const root = mkdtempSync(join(tmpdir(), 'govctl-terminal-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const env = { XDG_CONFIG_HOME: join(root, 'config'), XDG_DATA_HOME: join(root, 'data'), HOME: root, SERVICE_API_KEY: API_KEY };

let server: FaultServer;
beforeEach(async () => {
  server = await startFaultServer({
    handler: (request) => {
      const path = request.url.split('?')[0];
      if (path === '/api/me') return { body: { user_id: 'usr_1', workspace_id: 'ws_1', org_id: 'org_1' } };
      if (path.endsWith('/grc/systems')) {
        return {
          body: { systems: [{ system_name: HOSTILE, system_id: `sys_${HOSTILE}`, registered: true, risk_tier: 'high\u202e', last_evidence_at: null }] },
        };
      }
      return { status: 422, body: { error: 'validation_error', message: `bad ${HOSTILE}`, field: 'system_name' } };
    },
  });
});
afterEach(() => server.close());

async function run(args: string[], options: { isTTY?: boolean; baseUrl?: string } = {}) {
  // No colour: the only ESC bytes left would be the service's. A wide terminal: the escapes are
  // checked whole, not as a table fitted to 100 columns cuts them.
  const io = createMemoryIO({ isTTY: options.isTTY ?? false, noColor: true, columns: 400 });
  const exitCode = await main(['--base-url', options.baseUrl ?? server.url, ...args], { io, env, cwd: root });
  return { exitCode, stdout: io.stdoutText(), stderr: io.stderrText() };
}

describe('terminalText', () => {
  it('shows controls, ESC, C1 and bidi characters as visible escapes and keeps other text', () => {
    expect(terminalText('a\x1b[31mb')).toBe('a\\x1b[31mb');
    expect(terminalText('\x9b\x85\x7f\t\n')).toBe('\\x9b\\x85\\x7f\\x09\\x0a');
    expect(terminalText('\u202e\u2066\u2069\u200e\u200f\u061c')).toBe('\\u202e\\u2066\\u2069\\u200e\\u200f\\u061c');
    expect(terminalText('Zürich – 東京 ✓')).toBe('Zürich – 東京 ✓');
    expect(terminalText(HOSTILE)).not.toMatch(FORBIDDEN);
  });

  it('shows a base URL without its userinfo or query', () => {
    expect(displayUrl('http://user:pw@127.0.0.1:8080/gov?token=x#frag')).toBe('http://***@127.0.0.1:8080/gov?***#***');
    expect(displayUrl('https://governance.example.com')).toBe('https://governance.example.com');
    expect(displayUrl('not a url with secret')).toBe('(not a URL)');
  });
});

describe('service text on a terminal', () => {
  it('is neutralised in a table, visible as escapes', async () => {
    const result = await run(['systems'], { isTTY: true });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).not.toMatch(FORBIDDEN);
    expect(result.stdout).toContain('loan\\x1b[2J\\x1b]0;pwned\\x07');
    expect(result.stdout).toContain('\\u202eredacs\\u202c');
  });

  it('is neutralised in piped lines, which stay one line per row', async () => {
    const result = await run(['systems']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).not.toMatch(FORBIDDEN);
    expect(result.stdout.split('\n')).toHaveLength(2);
    expect(result.stdout.split('\n')[0].split('\t')).toHaveLength(5);
  });

  it('is kept exactly with --json', async () => {
    const result = await run(['systems', '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).systems[0].system_name).toBe(HOSTILE);
  });

  it("is neutralised in the service's error message, text and --on-error warn alike", async () => {
    const write = await run([
      'evidence',
      'add',
      'change_event',
      '--system',
      's',
      '--type',
      'deployment',
      '--by',
      'a@example.com',
      '--description',
      'd',
      '--environment',
      'production',
    ]);
    expect(write.exitCode).toBe(65);
    expect(write.stderr).toContain('bad loan\\x1b[2J');
    expect(write.stderr).not.toMatch(FORBIDDEN);
    const warned = await run([
      '--on-error',
      'warn',
      'evidence',
      'add',
      'change_event',
      '--system',
      's',
      '--type',
      'deployment',
      '--by',
      'a@example.com',
      '--description',
      'd',
      '--environment',
      'production',
    ]);
    expect(warned.exitCode).toBe(0);
    expect(warned.stderr).toContain('bad loan\\x1b[2J');
    expect(warned.stderr).not.toMatch(FORBIDDEN);
  });
});

describe('a base URL with userinfo or a query string', () => {
  it('is never printed whole: config show, errors', async () => {
    const url = `http://user:pw@127.0.0.1:${server.port}/?token=hunter2`;
    for (const args of [['config', 'show'], ['config', 'show', '--json'], ['whoami'], ['whoami', '--json']]) {
      for (const isTTY of [false, true]) {
        const result = await run(args, { baseUrl: url, isTTY });
        expect(result.stdout + result.stderr).not.toContain('hunter2');
        expect(result.stdout + result.stderr).not.toContain('user:pw');
      }
    }
    const shown = await run(['config', 'show', '--json'], { baseUrl: url });
    expect(JSON.parse(shown.stdout).settings.baseUrl.value).toBe(`http://***@127.0.0.1:${server.port}/?***`);
    const refused = await run(['whoami'], { baseUrl: url });
    expect(refused.exitCode).toBe(78);
    expect(refused.stderr).toContain(`http://***@127.0.0.1:${server.port}/?***`);
    expect(server.count).toBe(0);
  });

  it('is never printed whole in -v traces and notices', async () => {
    const url = `http://127.0.0.1:${server.port}/?token=hunter2`;
    const result = await run(['-v', 'whoami'], { baseUrl: url });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain(`GET http://127.0.0.1:${server.port}/api/me`);
    expect(result.stderr).toContain(`service http://127.0.0.1:${server.port}/?***`);
    expect(result.stdout + result.stderr).not.toContain('hunter2');
    // A request's own query stays visible: only the base URL's is hidden.
    const listed = await run(['-v', 'systems', '--name', 'loan'], { baseUrl: url });
    expect(listed.stderr).toMatch(new RegExp(`GET http://127\\.0\\.0\\.1:${server.port}/api/workspaces/ws_1/governance/grc/systems\\?name=loan `));
    expect(listed.stderr).not.toContain('hunter2');
  });
});
