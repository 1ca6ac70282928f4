/**
 * The three output shapes, in-process: a pseudo-terminal is not available to execa, so the TTY
 * shape (tables, colour, relative times) is checked with an in-memory IO that claims to be a TTY,
 * and the piped and JSON shapes both here and end to end in the other files.
 */
import { describe, expect, it } from 'vitest';
import { JsonFloat } from '../../src/core/index.js';
import { colorLevel, createMemoryIO } from '../../src/cli/io.js';
import { isoTime, printFields, printJson, printTable, relativeTime, type Column } from '../../src/cli/render.js';

interface Row {
  id: string;
  at: string;
  signed: boolean;
  controls: string[];
}

const columns: Column<Row>[] = [
  { header: 'record id', value: (r) => r.id },
  { header: 'occurred', value: (r) => r.at, kind: 'time' },
  { header: 'signed', value: (r) => r.signed, kind: 'boolean' },
  { header: 'controls', value: (r) => r.controls, kind: 'list', ttyKind: 'count' },
];
const now = new Date('2026-03-01T12:00:00Z');
const rows: Row[] = [
  { id: 'rec_1', at: '2026-03-01T11:55:00Z', signed: true, controls: ['A', 'B'] },
  { id: 'rec_2', at: '2026-02-27T12:00:00.000+00:00', signed: false, controls: [] },
];
const stripAnsi = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '');

describe('render on a terminal', () => {
  it('draws a table with upper-case headers, relative times, ✓/✗ and counts', async () => {
    const io = createMemoryIO({ isTTY: true });
    await printTable(io.stdout, columns, rows, { now: () => now });
    await io.flush();
    const text = stripAnsi(io.stdoutText());
    expect(text).toContain('RECORD ID');
    expect(text).toContain('OCCURRED');
    expect(text).toMatch(/│ rec_1\s+│ 5 minutes ago\s+│ ✓\s+│ 2\s+│/);
    expect(text).toMatch(/│ rec_2\s+│ 2 days ago\s+│ ✗\s+│ 0\s+│/);
    expect(text.split('\n')[0]).toMatch(/^┌/);
  });

  it('colours a terminal unless told not to, per stream', async () => {
    const coloured = createMemoryIO({ isTTY: true });
    await printTable(coloured.stdout, columns, rows, { now: () => now });
    await coloured.flush();
    expect(coloured.stdoutText()).toMatch(/\u001b\[/);

    const plain = createMemoryIO({ isTTY: true, env: { NO_COLOR: '1' } });
    await printTable(plain.stdout, columns, rows, { now: () => now });
    await plain.flush();
    expect(plain.stdoutText()).not.toMatch(/\u001b\[/);

    const mixed = createMemoryIO({ stdoutIsTTY: false, stderrIsTTY: true });
    expect(mixed.stdout.colorEnabled).toBe(false);
    expect(mixed.stderr.colorEnabled).toBe(true);
  });

  it('aligns the fields of one object', async () => {
    const io = createMemoryIO({ isTTY: true, noColor: true });
    await printFields(io.stdout, [
      ['user_id', 'usr_1'],
      ['workspace_id', 'ws_1'],
    ]);
    await io.flush();
    expect(io.stdoutText()).toBe('user_id       usr_1\nworkspace_id  ws_1\n');
  });

  it('indents JSON on a terminal and keeps numbers as written', async () => {
    const io = createMemoryIO({ isTTY: true });
    await printJson(io.stdout, { score: new JsonFloat(85), big: 12345678901234567890n });
    await io.flush();
    expect(io.stdoutText()).toBe('{\n  "score": 85.0,\n  "big": 12345678901234567890\n}\n');
  });
});

describe('render piped', () => {
  it('writes tab-separated lines without a header, ISO 8601 times, no colour', async () => {
    const io = createMemoryIO({ isTTY: false, env: { FORCE_COLOR: undefined } });
    await printTable(io.stdout, columns, rows, { now: () => now });
    await io.flush();
    expect(io.stdoutText()).toBe('rec_1\t2026-03-01T11:55:00.000Z\ttrue\tA,B\nrec_2\t2026-02-27T12:00:00.000Z\tfalse\t\n');
  });

  it('keeps every line a line: tabs and newlines in values become spaces', async () => {
    const io = createMemoryIO();
    await printTable(io.stdout, [{ header: 'x', value: (r: { x: string }) => r.x }], [{ x: 'a\tb\nc' }], { now: () => now });
    await io.flush();
    expect(io.stdoutText()).toBe('a b c\n');
  });

  it('writes JSON on one line', async () => {
    const io = createMemoryIO();
    await printJson(io.stdout, { a: [1, 2] });
    await io.flush();
    expect(io.stdoutText()).toBe('{"a":[1,2]}\n');
  });
});

describe('colour precedence (--no-color > NO_COLOR > FORCE_COLOR > TERM=dumb > TTY)', () => {
  it.each([
    [{ noColorFlag: true, env: { FORCE_COLOR: '1' }, isTTY: true }, 0],
    [{ noColorFlag: false, env: { NO_COLOR: '1', FORCE_COLOR: '1' }, isTTY: true }, 0],
    [{ noColorFlag: false, env: { FORCE_COLOR: '1' }, isTTY: false }, 1],
    [{ noColorFlag: false, env: { FORCE_COLOR: '0' }, isTTY: true }, 0],
    [{ noColorFlag: false, env: { FORCE_COLOR: '3', TERM: 'dumb' }, isTTY: false }, 3],
    [{ noColorFlag: false, env: { TERM: 'dumb' }, isTTY: true }, 0],
    [{ noColorFlag: false, env: {}, isTTY: true }, 1],
    [{ noColorFlag: false, env: {}, isTTY: false }, 0],
  ])('%j → level %i', (inputs, level) => {
    expect(colorLevel(inputs)).toBe(level);
  });
});

describe('times', () => {
  it('reads relative times as people say them', () => {
    expect(relativeTime('2026-03-01T11:59:50Z', now)).toBe('just now');
    expect(relativeTime('2026-03-01T11:00:00Z', now)).toBe('1 hour ago');
    expect(relativeTime('2026-03-01T14:00:00Z', now)).toBe('in 2 hours');
    expect(relativeTime('2025-12-01T00:00:00Z', now)).toBe('2025-12-01');
  });

  it('normalises piped times to ISO 8601 UTC', () => {
    expect(isoTime('2026-03-01T13:00:00+01:00')).toBe('2026-03-01T12:00:00.000Z');
    expect(isoTime('not a time')).toBe('not a time');
  });
});
