/**
 * The three output shapes (docs/cli.md "Output"):
 * - TTY: tables (cli-table3, loaded only when a table is drawn) fitted to the terminal's width
 *   (table-fit.ts), colour, relative times;
 * - piped: one tab-separated line per row, no header, ISO 8601 times, no colour;
 * - `--json`: one JSON document, written losslessly (numbers keep their form).
 *
 * Values in tables and fields are service data: their control characters, ESC sequences and bidi
 * controls are shown as visible escapes (terminal-text.ts); `--json` is printed exactly.
 */
import { stringifyJson } from '../core/canonical-json.js';
import type { OutputStream } from './io.js';
import { MIN_WIDTH, displayWidth, fitCell, fitWidths, truncateEnd, type Shrink } from './table-fit.js';
import { terminalText } from './terminal-text.js';

/** How a column's values are shown. */
export type ColumnKind = 'text' | 'time' | 'list' | 'boolean' | 'count';

/** One column of a table. */
export interface Column<T> {
  /** header on a TTY (upper-cased) */
  header: string;
  value: (row: T) => unknown;
  /**
   * `time`: relative on a TTY, ISO 8601 piped; `list`: comma-separated piped, `N items` on a TTY
   * when long; `boolean`: ✓/✗ on a TTY, true/false piped; `count`: the length of a list value.
   */
  kind?: ColumnKind;
  /** how the column shows on a TTY when that differs from `kind` (e.g. a count instead of the list) */
  ttyKind?: ColumnKind;
  /** colour for a TTY cell */
  style?: (text: string, out: OutputStream, row: T) => string;
  /**
   * How the column gives up width on a terminal too narrow for the table (default `end`): ids cut
   * in the `middle`, long lists `wrap`. Piped output is never cut.
   */
  shrink?: Shrink;
  /** the narrowest it may be cut to (default by `shrink`: table-fit.ts MIN_WIDTH) */
  minWidth?: number;
}

/** Terminal width assumed when a terminal does not tell its own. */
const DEFAULT_COLUMNS = 80;

/** What a render may want besides the stream: the clock, for relative times. */
export interface RenderContext {
  now: () => Date;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * A time relative to now, as people read it: `just now`, `5 minutes ago`, `in 2 hours`,
 * `3 days ago`; older than 30 days, the date (`2025-01-31`).
 */
export function relativeTime(iso: string, now: Date): string {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return iso;
  const delta = now.getTime() - time;
  const abs = Math.abs(delta);
  if (abs < 45 * SECOND) return 'just now';
  if (abs >= 30 * DAY) return new Date(time).toISOString().slice(0, 10);
  const [n, unit] =
    abs < 45 * MINUTE ? [Math.round(abs / MINUTE), 'minute'] : abs < 22 * HOUR ? [Math.round(abs / HOUR), 'hour'] : [Math.round(abs / DAY), 'day'];
  const amount = `${Math.max(1, n)} ${unit}${n === 1 ? '' : 's'}`;
  return delta >= 0 ? `${amount} ago` : `in ${amount}`;
}

/** A time for piped output: ISO 8601 in UTC when it parses, as given otherwise. */
export function isoTime(value: string): string {
  const time = Date.parse(value);
  return Number.isNaN(time) ? value : new Date(time).toISOString();
}

/** Text of any value for a cell: strings as they are, other values as JSON. */
function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  return stringifyJson(value);
}

/**
 * A piped cell: tabs and line breaks would break the line format, so they become spaces; other
 * control characters become visible escapes.
 */
function tsvCell(value: string): string {
  return terminalText(value.replace(/[\t\r\n]+/g, ' '));
}

function cell<T>(column: Column<T>, row: T, tty: boolean, context: RenderContext): string {
  const value = column.value(row);
  switch (tty ? (column.ttyKind ?? column.kind) : column.kind) {
    case 'time':
      return typeof value === 'string' ? (tty ? relativeTime(value, context.now()) : isoTime(value)) : text(value);
    case 'list':
      return Array.isArray(value) ? value.map(text).join(tty ? ', ' : ',') : text(value);
    case 'count':
      return Array.isArray(value) ? String(value.length) : text(value);
    case 'boolean':
      return value === true ? (tty ? '✓' : 'true') : value === false ? (tty ? '✗' : 'false') : text(value);
    default:
      return text(value);
  }
}

/**
 * Prints rows: a table on a TTY (header, colour), tab-separated lines without a header otherwise.
 * An empty table prints nothing (the caller says "nothing found" on stderr if it wants).
 */
export async function printTable<T>(out: OutputStream, columns: readonly Column<T>[], rows: readonly T[], context: RenderContext): Promise<void> {
  if (rows.length === 0) return;
  if (!out.isTTY) {
    // Large listings are written in slices so that memory stays flat and backpressure applies.
    let chunk = '';
    for (const row of rows) {
      chunk += columns.map((column) => tsvCell(cell(column, row, false, context))).join('\t') + '\n';
      if (chunk.length >= 65536) {
        await out.write(chunk);
        chunk = '';
      }
    }
    await out.write(chunk);
    return;
  }
  // Cells as the terminal shows them (escaped), fitted to its width before colour is added.
  const texts = rows.map((row) => columns.map((column) => terminalText(cell(column, row, true, context))));
  const headers = columns.map((column) => column.header.toUpperCase());
  const shrinks = columns.map((column) => column.shrink ?? 'end');
  const sizes = columns.map((column, i) => {
    const natural = Math.max(displayWidth(headers[i]), ...texts.map((cells) => Math.max(...cells[i].split('\n').map(displayWidth))));
    // Times, marks and counts are short by nature and unreadable cut: they keep their width.
    const kind = column.ttyKind ?? column.kind;
    const min = kind === 'time' || kind === 'boolean' || kind === 'count' ? natural : (column.minWidth ?? MIN_WIDTH[shrinks[i]]);
    return { natural, min: Math.min(natural, min) };
  });
  // A pseudo-terminal may report 0 columns: that is not knowing.
  const available = out.columns || DEFAULT_COLUMNS;
  // Boxed: "│ " before each cell, " " after it, and the closing "│". When even the minimums do not
  // fit in a box, the borders go (columns two spaces apart, as gh draws every table) to give the
  // cells the room.
  const boxedChrome = 3 * columns.length + 1;
  const boxed = sizes.reduce((sum, size) => sum + size.min, boxedChrome) <= available;
  const widths = fitWidths(sizes, boxed ? boxedChrome : 2 * (columns.length - 1), available);
  const { default: Table } = await import('cli-table3');
  const table = new Table({
    head: headers.map((header, i) => out.color.bold(truncateEnd(header, widths[i]))),
    colWidths: widths.map((width) => (boxed ? width + 2 : width)),
    ...(boxed
      ? { style: { head: [], border: out.colorEnabled ? ['grey'] : [] }, chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' } }
      : { style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 }, chars: BORDERLESS }),
  });
  rows.forEach((row, r) => {
    table.push(
      columns.map((column, i) => {
        const shown = fitCell(texts[r][i], widths[i], shrinks[i]);
        return column.style && out.colorEnabled ? column.style(shown, out, row) : shown;
      }),
    );
  });
  const drawn = boxed ? table.toString() : table.toString().replace(/ +$/gm, '');
  await out.write(drawn + '\n');
}

/** cli-table3's characters for a table without borders: columns two spaces apart. */
const BORDERLESS = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: '  ',
};

/**
 * Prints one object's fields: aligned `name  value` lines on a TTY, `name<TAB>value` lines piped.
 */
export async function printFields(out: OutputStream, fields: readonly [string, unknown][]): Promise<void> {
  if (out.isTTY) {
    const width = Math.max(...fields.map(([name]) => name.length));
    await out.write(fields.map(([name, value]) => `${out.color.bold(name.padEnd(width))}  ${terminalText(text(value))}`).join('\n') + '\n');
  } else {
    await out.write(fields.map(([name, value]) => `${name}\t${tsvCell(text(value))}`).join('\n') + '\n');
  }
}

/**
 * Prints one JSON document: indented on a TTY, one line when piped. Lossless: `85.0` stays `85.0`
 * and big integers keep every digit, so the body is the service's body.
 */
export async function printJson(out: OutputStream, value: unknown): Promise<void> {
  await out.write(stringifyJson(value, out.isTTY ? 2 : 0) + '\n');
}

/** `1 record`, `2 records`. */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}
