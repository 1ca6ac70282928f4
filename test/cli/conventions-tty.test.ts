/**
 * --quiet and --json on a real terminal at 80 columns (a pseudo-terminal, test/helpers/pty.ts):
 * stderr on the terminal, results to a file, the case where `evidence import` draws its progress
 * bar. With -q or --json nothing is drawn or said; without, the bar and the summary are.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BATCH_RECORDS } from '../../src/cli/evidence/import.js';
import { countPattern, ensureBuilt, makeTempDir } from '../helpers/cli.js';
import { HAS_SCRIPT, PTY_SKIP_REASON, runInPty, stripAnsi } from '../helpers/pty.js';

/**
 * A batch and a half: the bar is drawn when the import starts and redrawn as each batch is
 * answered, and the result lines span a full batch and a partial one. A larger file adds only
 * more batches of the same; that nothing reaches the terminal with -q or --json needs no length,
 * since the bar is drawn at the start.
 */
const COUNT = BATCH_RECORDS + BATCH_RECORDS / 2;
let file: string;

beforeAll(async () => {
  await ensureBuilt();
  file = join(makeTempDir('govctl-quiet-'), 'records.ndjson');
  const lines: string[] = [];
  for (let n = 0; n < COUNT; n++) {
    lines.push(
      JSON.stringify({
        record_type: 'change_event',
        system_name: 'quiet',
        occurred_at: '2026-01-01T00:00:00Z',
        payload: { type: 'deployment', by: 'ci@example.com', description: `release ${n}`, environment: 'production', system: 'quiet' },
      }),
    );
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
});

describe.skipIf(!HAS_SCRIPT)(`--quiet and --json on a terminal${HAS_SCRIPT ? '' : ` (${PTY_SKIP_REASON})`}`, () => {
  const run = async (flags: string[]) => {
    const dir = makeTempDir('govctl-quiet-');
    const results = join(dir, 'results');
    const result = await runInPty(['evidence', 'import', file, '--base-url', 'local', ...flags], {
      env: { GOVCTL_DATA_DIR: join(dir, 'data') },
      stdoutTo: results,
      columns: 80,
      timeout: 60_000,
    });
    return { ...result, results: readFileSync(results, 'utf8') };
  };

  it('without them: the bar and the summary', async () => {
    const loud = await run([]);
    expect(loud.exitCode).toBe(0);
    expect(stripAnsi(loud.output)).toMatch(/importing /);
    expect(stripAnsi(loud.output)).toMatch(new RegExp(`govctl: imported ${countPattern(COUNT)} records in`));
  });

  it('-q: nothing on the terminal, every result line in the file', async () => {
    const quiet = await run(['-q']);
    expect(quiet.exitCode).toBe(0);
    expect(quiet.output).toBe('');
    expect(quiet.results.trimEnd().split('\n')).toHaveLength(COUNT);
  });

  it('--json: nothing on the terminal, NDJSON in the file', async () => {
    const json = await run(['--json']);
    expect(json.exitCode).toBe(0);
    expect(json.output).toBe('');
    expect(
      json.results
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line).status),
    ).toEqual(Array(COUNT).fill('ok'));
  });
});
