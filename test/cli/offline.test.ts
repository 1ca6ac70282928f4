/**
 * The command line end to end without a service: the framework (help, usage errors, settings
 * precedence, output hygiene) and the offline commands (evidence sign/verify, attest sign/verify,
 * signing-key). Runs are in-process (runCli) except where only a process shows the behaviour: the
 * entry point's own answers, a closed pipe, a real pipe's backpressure, and `~` in messages.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SigningKey, sha256Hex } from '../../src/core/index.js';
import { ensureBuilt, makeHome, REPO, runCli, runProcess, runShell } from '../helpers/cli.js';

const KEY = 'a1'.repeat(32);
const OTHER_KEY = 'b2'.repeat(32);
const WS = 'ws_test';

const record = (n: number, extra = '') =>
  `{"record_type":"change_event","system_name":"loan-scorer","occurred_at":"2026-01-31T09:30:00.000Z","payload":{"type":"deployment","by":"ci@example.com","description":"release ${n}${extra}","environment":"production","system":"loan-scorer","score":85.0,"big":12345678901234567890}}`;

beforeAll(async () => {
  await ensureBuilt();
});

describe('help and usage', () => {
  it('prints help with examples and exits 0', async () => {
    const result = await runCli(['--help']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('Usage: govctl');
    expect(result.stdout).toContain('evidence');
    expect(result.stdout).toContain('Examples:');
    expect(result.stderr).toBe('');
  });

  // The entry point answers these two before loading the command line (bin/govctl.js).
  it('answers --version and --help as a process, with what the command line itself prints', async () => {
    const [version, short, help, inProcess] = await Promise.all([runProcess(['--version']), runProcess(['-V']), runProcess(['--help']), runCli(['--help'])]);
    const { version: packageVersion } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
    expect(version).toEqual({ exitCode: 0, stdout: `${packageVersion}\n`, stderr: '' });
    expect(short).toEqual(version);
    expect(help).toEqual({ exitCode: 0, stdout: inProcess.stdout, stderr: '' });
  });

  it('prints the version and exits 0', async () => {
    const result = await runCli(['evidence', 'list', '--version']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('lists the record types with their summaries under `evidence add --help`', async () => {
    const result = await runCli(['evidence', 'add', '--help']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/ai_risk_assessment \[options\]\s+A risk classification/);
    expect(result.stdout).toContain('policy_acknowledged');
  });

  it("lists a record type's flags with enums, (required) marks and an example", async () => {
    const result = await runCli(['evidence', 'add', 'ai_risk_assessment', '--help']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/--risk-level <value>\s+risk classification; one of: unacceptable, high,\s+limited, minimal \(required\)/);
    expect(result.stdout).toContain('--impact-domain <text>');
    expect(result.stdout).toContain('--no-art5-self-assessment');
    expect(result.stdout).toMatch(/--assessor <value>[^-]*\(required\)/);
    expect(result.stdout).toContain('$ govctl evidence add ai_risk_assessment --system loan-scorer');
  });

  it('rejects an unknown flag with 64, one line on stderr and nothing on stdout', async () => {
    const result = await runCli(['evidence', 'list', '--bogus']);
    expect(result.exitCode).toBe(64);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe("govctl: unknown option '--bogus'; see `govctl evidence list --help`\n");
  });

  it('rejects an unknown command and a missing argument with 64', async () => {
    expect((await runCli(['frobnicate'])).exitCode).toBe(64);
    const missing = await runCli(['evidence', 'import']);
    expect(missing.exitCode).toBe(64);
    expect(missing.stderr).toContain("missing required argument 'file|-'");
  });

  it('shows a group without its subcommand as help on stdout and exits 0, as gh does', async () => {
    const result = await runCli(['evidence']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('Usage: govctl evidence');
  });

  it('writes a usage error as one JSON object on stderr with --json', async () => {
    const result = await runCli(['evidence', 'list', '--bogus', '--json']);
    expect(result.exitCode).toBe(64);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr)).toEqual({ error: 'usage_error', message: "unknown option '--bogus'" });
  });

  it('never takes the API key as a flag value, and never echoes it', async () => {
    const result = await runCli(['whoami', '--api-key', 'gk_supersecretvalue']);
    expect(result.exitCode).toBe(64);
    expect(result.stderr).toContain('--api-key-file');
    expect(result.stderr).toContain('SERVICE_API_KEY');
    expect(result.stderr + result.stdout).not.toContain('supersecretvalue');
  });

  it('rejects a number flag that is not a whole number with 64', async () => {
    const result = await runCli(['evidence', 'list', '--limit', 'ten']);
    expect(result.exitCode).toBe(64);
    expect(result.stderr).toContain('--limit must be a whole number');
  });
});

describe('signing-key', () => {
  it('generates a 64-hex key, different each time', async () => {
    const [a, b] = await Promise.all([runCli(['signing-key', 'generate']), runCli(['signing-key', 'generate'])]);
    expect(a.exitCode).toBe(0);
    expect(a.stdout).toMatch(/^[0-9a-f]{64}\n$/);
    expect(a.stdout).not.toBe(b.stdout);
    expect(a.stderr).toBe(''); // the hint is for terminals only
  });

  it('shows the Ed25519 public key of the configured key', async () => {
    const result = await runCli(['signing-key', 'public'], { env: { SERVICE_SIGNING_KEY: KEY } });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(`${SigningKey.fromHex(KEY).publicKeyHex}\n`);
    expect(result.stdout + result.stderr).not.toContain(KEY);
  });

  it('fails with 78 when no key is configured', async () => {
    const result = await runCli(['signing-key', 'public']);
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toContain('SERVICE_SIGNING_KEY');
  });

  it('fails with 78 for a malformed key, naming the setting and never the value', async () => {
    const result = await runCli(['signing-key', 'public'], { env: { SERVICE_SIGNING_KEY: 'not-a-key-zzzz' } });
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toContain('SERVICE_SIGNING_KEY must be 64 hex characters');
    expect(result.stderr).not.toContain('not-a-key-zzzz');
  });
});

describe('settings precedence: flag > environment > project config > user config', () => {
  const keys = { flag: 'c3'.repeat(32), env: 'd4'.repeat(32), project: 'e5'.repeat(32), user: 'f6'.repeat(32) };
  const publicOf = (hex: string) => `${SigningKey.fromHex(hex).publicKeyHex}\n`;

  it('takes each source in turn', async () => {
    const home = makeHome();
    const project = join(home, 'work', 'repo');
    const cwd = join(project, 'deep', 'er');
    mkdirSync(cwd, { recursive: true });
    mkdirSync(join(home, 'config', 'govctl'), { recursive: true });
    writeFileSync(join(home, 'config', 'govctl', 'config.json'), JSON.stringify({ signingKey: keys.user }), { mode: 0o600 });
    expect((await runCli(['signing-key', 'public'], { home, cwd })).stdout).toBe(publicOf(keys.user));

    writeFileSync(join(project, '.govctlrc.yaml'), `signingKey: ${keys.project}\n`, { mode: 0o600 });
    expect((await runCli(['signing-key', 'public'], { home, cwd })).stdout).toBe(publicOf(keys.project));

    expect((await runCli(['signing-key', 'public'], { home, cwd, env: { SERVICE_SIGNING_KEY: keys.env } })).stdout).toBe(publicOf(keys.env));

    writeFileSync(join(home, 'flag.key'), `${keys.flag}\n`, { mode: 0o600 });
    const flagged = await runCli(['signing-key', 'public', '--signing-key-file', join(home, 'flag.key')], {
      home,
      cwd,
      env: { SERVICE_SIGNING_KEY: keys.env },
    });
    expect(flagged.stdout).toBe(publicOf(keys.flag));
    expect(flagged.stderr).toBe('');
  });

  it('warns once when a config file that holds a key is readable by others', async () => {
    const home = makeHome();
    const file = join(home, '.govctlrc.json');
    writeFileSync(file, JSON.stringify({ signingKey: keys.project }));
    chmodSync(file, 0o644);
    // A process: the home directory shown as `~` is the process's (displayPath reads os.homedir()).
    const result = await runProcess(['signing-key', 'public'], { home });
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe(`govctl: warning: ~/.govctlrc.json holds a signing key and is readable by other users; run: chmod 600 ${file}\n`);
  });

  it('fails with 78 for a malformed config file, without echoing its text', async () => {
    const home = makeHome();
    writeFileSync(join(home, '.govctlrc.json'), '{"apiKey": "gk_secret_in_file"');
    const result = await runProcess(['signing-key', 'public'], { home });
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toContain('cannot read the config file ~/.govctlrc.json');
    expect(result.stderr).not.toContain('gk_secret_in_file');
  });
});

describe('evidence sign and verify (offline)', () => {
  const env = { SERVICE_SIGNING_KEY: KEY };

  it('signs records from stdin, keeping number lexemes, one JSON line each', async () => {
    const input = `${record(1)}\n${record(2)}\n`;
    const result = await runCli(['evidence', 'sign', '-', '--workspace', WS], { env, input });
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('"score":85.0,"big":12345678901234567890');
    expect(lines[0]).toMatch(/"client_sig":"[0-9a-f]{64}","client_sig_algo":"hmac-sha256"}$/);
    expect(result.stdout + result.stderr).not.toContain(KEY);
  });

  it('adds occurred_at when it is absent, and reads an array as well', async () => {
    const input = JSON.stringify([JSON.parse(record(1).replace('"occurred_at":"2026-01-31T09:30:00.000Z",', ''))]);
    const result = await runCli(['evidence', 'sign', '--workspace', WS], { env, input });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/"occurred_at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"/);
  });

  it('verifies what it signed (0), and names a changed or unsigned record (2)', async () => {
    const home = makeHome();
    const signed = await runCli(['evidence', 'sign', '-', '--workspace', WS], { env, input: `${record(1)}\n${record(2)}\n`, home });
    const good = await runCli(['evidence', 'verify', '-', '--workspace', WS], { env, input: signed.stdout, home });
    expect(good.exitCode).toBe(0);
    expect(good.stdout).toBe('valid\t0\tchange_event\tloan-scorer\nvalid\t1\tchange_event\tloan-scorer\n');

    const tampered = signed.stdout.replace('release 2', 'release 3');
    const bad = await runCli(['evidence', 'verify', '-', '--workspace', WS], { env, input: `${tampered}${record(4)}\n`, home });
    expect(bad.exitCode).toBe(2);
    expect(bad.stdout).toBe('valid\t0\tchange_event\tloan-scorer\ninvalid\t1\tchange_event\tloan-scorer\nunsigned\t2\tchange_event\tloan-scorer\n');
    expect(bad.stderr).toBe(
      'govctl: 2 of 3 records do not verify: #1 (change_event, loan-scorer) invalid; #2 (change_event, loan-scorer) unsigned; a changed record no longer matches its signature; an unsigned one was never signed\n',
    );
  });

  it('fails (65) on an input that holds no record, so that a verify step fed by an empty export does not pass having checked nothing', async () => {
    for (const input of ['', '\n\n', '[]']) {
      const evidence = await runCli(['evidence', 'verify', '-', '--workspace', WS], { env, input });
      expect(evidence.exitCode, JSON.stringify(input)).toBe(65);
      expect(evidence.stdout).toBe('');
      expect(evidence.stderr).toBe(
        'govctl: the input holds no record: nothing was verified; give the file of records to verify (one JSON object, an array or NDJSON), or --remote to verify the stored ones\n',
      );
      const attestations = await runCli(['attest', 'verify', '-', '--workspace', WS, '--json'], { input });
      expect(attestations.exitCode, JSON.stringify(input)).toBe(65);
      expect(attestations.stdout).toBe('');
      expect(JSON.parse(attestations.stderr)).toMatchObject({ error: 'invalid_input', message: 'the input holds no attestation: nothing was verified' });
    }
  });

  it('does not verify under another workspace or key', async () => {
    const signed = await runCli(['evidence', 'sign', '-', '--workspace', WS], { env, input: record(1) });
    expect((await runCli(['evidence', 'verify', '-', '--workspace', 'ws_other'], { env, input: signed.stdout })).exitCode).toBe(2);
    expect((await runCli(['evidence', 'verify', '-', '--workspace', WS], { env: { SERVICE_SIGNING_KEY: OTHER_KEY }, input: signed.stdout })).exitCode).toBe(2);
  });

  it('reports verification as one JSON document with --json', async () => {
    const result = await runCli(['evidence', 'verify', '-', '--workspace', WS, '--json'], { env, input: record(1) });
    expect(result.exitCode).toBe(2);
    expect(JSON.parse(result.stdout)).toEqual({
      verified: 0,
      failed: 1,
      results: [{ index: 0, status: 'unsigned', record_type: 'change_event', system_name: 'loan-scorer' }],
    });
    expect(JSON.parse(result.stderr).error).toBe('signature_invalid');
  });

  it('needs --workspace (64), a key (78), a readable file (66) and valid JSON records (65)', async () => {
    expect((await runCli(['evidence', 'sign', '-'], { env, input: record(1) })).exitCode).toBe(64);
    expect((await runCli(['evidence', 'sign', '-', '--workspace', WS], { input: record(1) })).exitCode).toBe(78);
    const missing = await runCli(['evidence', 'sign', 'no-such-file.json', '--workspace', WS], { env });
    expect(missing.exitCode).toBe(66);
    expect(missing.stderr).toBe('govctl: cannot read no-such-file.json: no such file; check the path, or give - to read stdin\n');
    const broken = await runCli(['evidence', 'sign', '-', '--workspace', WS], { env, input: '{"record_type": ' });
    expect(broken.exitCode).toBe(65);
    expect(broken.stdout).toBe('');
    const invalid = await runCli(['evidence', 'sign', '-', '--workspace', WS], { env, input: record(1).replace('"change_event"', '"no_such_type"') });
    expect(invalid.exitCode).toBe(65);
    expect(invalid.stderr).toContain('#0: record_type must be one of');
  });
});

describe('attest sign and verify (offline)', () => {
  const env = { SERVICE_SIGNING_KEY: KEY, SERVICE_SYSTEM_NAME: 'loan-scorer' };

  it('hashes the input file and stdin, signs, and verifies (0); a changed one does not (2)', async () => {
    const home = makeHome();
    writeFileSync(join(home, 'in.txt'), 'the prompt');
    const signed = await runCli(
      ['attest', 'sign', 'summarise', '--input', 'in.txt', '--output', '-', '--workspace', WS, '--authorised-by', 'alice@example.com', '--role', 'reviewer'],
      {
        env,
        home,
        input: 'the answer',
      },
    );
    expect(signed.exitCode).toBe(0);
    const attestation = JSON.parse(signed.stdout);
    expect(attestation).toMatchObject({
      system_name: 'loan-scorer',
      agent_name: 'loan-scorer',
      tool_name: 'summarise',
      input_hash: sha256Hex('the prompt'),
      output_hash: sha256Hex('the answer'),
      schema_version: 2,
      authorised_by: { identity: 'alice@example.com', role: 'reviewer' },
      verifying_key_hex: SigningKey.fromHex(KEY).publicKeyHex,
    });
    expect(attestation.witness_sig).toMatch(/^[0-9a-f]{128}$/);

    const good = await runCli(['attest', 'verify', '-', '--workspace', WS], { home, input: signed.stdout });
    expect(good.exitCode).toBe(0);
    expect(good.stdout).toBe('valid\t0\tsummarise\tloan-scorer\tcanonical\n');
    const bad = await runCli(['attest', 'verify', '-', '--workspace', WS], { home, input: signed.stdout.replace('"summarise"', '"summarize"') });
    expect(bad.exitCode).toBe(2);
  });

  it('hashes a file of several read chunks (4 MiB each, the last one short) exactly', async () => {
    const home = makeHome();
    // Distinct bytes in every chunk, so that a chunk hashed twice, skipped or read into the wrong buffer shows.
    const data = Buffer.alloc((9 << 20) + 123);
    for (let i = 0; i < data.length; i += 4096) data.writeUInt32LE(i, i);
    writeFileSync(join(home, 'big.bin'), data);
    writeFileSync(join(home, 'out.bin'), data.subarray(0, 4 << 20)); // exactly one chunk
    const signed = await runCli(['attest', 'sign', 'copy', '--input', 'big.bin', '--output', 'out.bin', '--workspace', WS], { env, home });
    expect(signed.exitCode, signed.stderr).toBe(0);
    expect(JSON.parse(signed.stdout)).toMatchObject({ input_hash: sha256Hex(data), output_hash: sha256Hex(data.subarray(0, 4 << 20)) });
  });

  it('prints an unsigned attestation without a key, which does not verify', async () => {
    const hash = sha256Hex('x');
    const result = await runCli(['attest', 'sign', 't', '--input-hash', hash, '--output-hash', hash, '--workspace', WS, '--system', 's']);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).witness_sig).toBeUndefined();
    const verified = await runCli(['attest', 'verify', '-', '--workspace', WS], { input: result.stdout });
    expect(verified.exitCode).toBe(2);
    expect(verified.stdout).toBe('unsigned\t0\tt\ts\t\n');
  });

  it('with --public-key, verifies only attestations signed by a trusted key', async () => {
    const hash = sha256Hex('x');
    const signed = await runCli(['attest', 'sign', 't', '--input-hash', hash, '--output-hash', hash, '--workspace', WS, '--system', 's'], { env });
    const trusted = SigningKey.fromHex(KEY).publicKeyHex;
    const other = SigningKey.fromHex(OTHER_KEY).publicKeyHex;
    const pinned = await runCli(['attest', 'verify', '-', '--workspace', WS, '--public-key', trusted.toUpperCase()], { input: signed.stdout });
    expect(pinned.exitCode).toBe(0);
    const untrusted = await runCli(['attest', 'verify', '-', '--workspace', WS, '--public-key', other], { input: signed.stdout });
    expect(untrusted.exitCode).toBe(2);
    expect(untrusted.stderr).toContain('#0 (t, s) invalid (signed by a key not given with --public-key)');
    const either = await runCli(['attest', 'verify', '-', '--workspace', WS, '--public-key', other, '--public-key', trusted], { input: signed.stdout });
    expect(either.exitCode).toBe(0);
    expect((await runCli(['attest', 'verify', '-', '--workspace', WS, '--public-key', 'abc'], { input: signed.stdout })).exitCode).toBe(64);
  });

  it('refuses conflicting or missing inputs and a malformed hash (64: docs/exit-codes.md "Malformed values")', async () => {
    const hash = sha256Hex('x');
    expect((await runCli(['attest', 'sign', 't', '--input', '-', '--output', '-', '--workspace', WS], { env, input: 'x' })).exitCode).toBe(64);
    expect((await runCli(['attest', 'sign', 't', '--input-hash', hash, '--workspace', WS], { env })).exitCode).toBe(64);
    expect((await runCli(['attest', 'sign', 't', '--input-hash', hash, '--output-hash', hash], { env })).exitCode).toBe(64);
    const bad = await runCli(['attest', 'sign', 't', '--input-hash', 'abc', '--output-hash', hash, '--workspace', WS], { env });
    expect(bad.exitCode).toBe(64);
    expect(bad.stderr).toContain('--input-hash must be a hex SHA-256 digest');
    expect((await runCli(['attest', 'sign', 't', '--input', 'missing.bin', '--output-hash', hash, '--workspace', WS], { env })).exitCode).toBe(66);
  });
});

describe('output hygiene', () => {
  it('ends quietly with 0 when the reader closes the pipe (| head -1)', async () => {
    const home = makeHome();
    writeFileSync(join(home, 'records.ndjson'), Array.from({ length: 20_000 }, (_, n) => record(n)).join('\n'));
    const result = await runShell('govctl evidence sign records.ndjson --workspace ws_test | head -1', { home, env: { SERVICE_SIGNING_KEY: KEY } });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split('\n')).toHaveLength(2);
    expect(result.stderr).toBe('');
  });

  it('keeps the verdict when the reader closes the pipe: verify | head -1 still exits 2 for records that do not verify', async () => {
    const home = makeHome();
    // unsigned records: none verifies; the listing (about 800 kB) outlasts what head reads
    writeFileSync(join(home, 'records.ndjson'), Array.from({ length: 20_000 }, (_, n) => record(n)).join('\n'));
    const result = await runShell('govctl evidence verify records.ndjson --workspace ws_test | head -1', { home, env: { SERVICE_SIGNING_KEY: KEY } });
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('unsigned\t0\tchange_event\tloan-scorer\n');
    expect(result.stderr).toMatch(/^govctl: 20000 of 20,?000 records do not verify: #0 \(change_event, loan-scorer\) unsigned;/);
  });

  it('imports every record when the reader closes the pipe (import | head -1), and exits by how they fared', async () => {
    const home = makeHome();
    const count = 3000;
    writeFileSync(join(home, 'records.ndjson'), Array.from({ length: count }, (_, n) => record(n)).join('\n'));
    const env = { GOVCTL_DATA_DIR: join(home, 'store') };
    const result = await runShell('govctl evidence import records.ndjson --base-url local | head -1', { home, env });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^ok\t0\t/);
    const stored = await runCli(['evidence', 'list', '--days', '36500', '--json', '--base-url', 'local', '--limit', '1'], { home, env });
    expect(JSON.parse(stored.stdout).total).toBe(count);
  });

  it('writes piped output over 1 MB intact', async () => {
    const home = makeHome();
    const count = 6000;
    writeFileSync(join(home, 'records.ndjson'), Array.from({ length: count }, (_, n) => record(n, ' padding'.repeat(10))).join('\n'));
    // A process: the output goes through a real pipe, whose backpressure the writes must honour.
    const result = await runProcess(['evidence', 'sign', 'records.ndjson', '--workspace', WS], { home, env: { SERVICE_SIGNING_KEY: KEY } });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.length).toBeGreaterThan(1 << 20);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(count);
    lines.forEach((line, n) => expect(line).toContain(`"description":"release ${n} padding`));
    const verified = await runCli(['evidence', 'verify', '-', '--workspace', WS], { home, env: { SERVICE_SIGNING_KEY: KEY }, input: result.stdout });
    expect(verified.exitCode).toBe(0);
    expect(verified.stdout.trimEnd().split('\n')).toHaveLength(count);
  });
});
