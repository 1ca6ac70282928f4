/**
 * Fitting tables and text to the terminal's width: the one home for measuring what a terminal
 * shows, cutting a cell with an ellipsis, wrapping a cell or a help line, and deciding how wide
 * each column of a table may be (docs/cli.md "Tables and the terminal width").
 *
 * Widths are display columns, not string lengths: string-width counts East Asian wide characters
 * and emoji as two columns and combining marks as none, and text is cut between graphemes
 * (Intl.Segmenter), so an accent or a flag is never split from its base.
 */
import stringWidth from 'string-width';

/** How a column gives up width when the table is too wide. */
export type Shrink =
  /** cut at the end: `loan-scorer-produ…` */
  | 'end'
  /**
   * cut in the middle, keeping both ends (hashes and keys, whose ends tell them apart): `3f9a…ae24`
   */
  | 'middle'
  /**
   * ids a user copies into another command: cut only when every other column is at its minimum
   * (then in the middle), so that on most terminals they stay whole
   */
  | 'id'
  /** wrap onto more lines at spaces (long lists: a row grows taller instead of losing values) */
  | 'wrap';

const ELLIPSIS = '…';

/** Narrowest a column is cut to, by how it shrinks (a narrower value is never widened). */
export const MIN_WIDTH: Readonly<Record<Shrink, number>> = { end: 8, middle: 11, id: 11, wrap: 20 };

/** Columns a terminal uses to show the text (ANSI colour escapes count as nothing). */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

// Made on first use: constructing a Segmenter loads ICU's break rules (10–20 ms), which a run that
// prints JSON or never cuts a cell would pay for at start-up.
let segmenter: Intl.Segmenter | undefined;

function graphemes(text: string): string[] {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  return Array.from(segmenter.segment(text), (part) => part.segment);
}

/** The longest start of `parts` that fits in `width` columns. */
function takeStart(parts: readonly string[], width: number): string {
  let out = '';
  let used = 0;
  for (const part of parts) {
    const w = displayWidth(part);
    if (used + w > width) break;
    out += part;
    used += w;
  }
  return out;
}

/** The longest end of `parts` that fits in `width` columns. */
function takeEnd(parts: readonly string[], width: number): string {
  let out = '';
  let used = 0;
  for (let i = parts.length - 1; i >= 0; i--) {
    const w = displayWidth(parts[i]);
    if (used + w > width) break;
    out = parts[i] + out;
    used += w;
  }
  return out;
}

/**
 * The text cut to `width` columns with an ellipsis at the end, or unchanged when it fits.
 * @example truncateEnd('loan-scorer-production', 12) // 'loan-scorer…'
 */
export function truncateEnd(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return '';
  return takeStart(graphemes(text), width - 1) + ELLIPSIS;
}

/**
 * The text cut to `width` columns by an ellipsis in the middle (the start gets the extra column),
 * or unchanged when it fits.
 * @example truncateMiddle('rec_01a20b24-5cb7-7540-aa8d-40a1ed04ae24', 15) // 'rec_01a…1ed04ae24' cut to 15
 */
export function truncateMiddle(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 1) return truncateEnd(text, width);
  const parts = graphemes(text);
  const room = width - 1;
  const start = takeStart(parts, Math.ceil(room / 2));
  const end = takeEnd(parts, room - displayWidth(start));
  return start + ELLIPSIS + end;
}

/**
 * Wraps text to lines of at most `width` columns, breaking at spaces; a word wider than the line
 * is broken where the line ends. Existing line breaks are kept.
 * @example wrapCell('A1, B2, C3', 6) // ['A1,', 'B2, C3']
 */
export function wrapCell(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    let used = 0;
    for (const word of paragraph.split(/ +/).filter(Boolean)) {
      let rest = word;
      let w = displayWidth(rest);
      if (line !== '' && used + 1 + w <= width) {
        line += ` ${rest}`;
        used += 1 + w;
        continue;
      }
      if (line !== '') lines.push(line);
      // A word wider than a whole line: cut it into line-wide pieces.
      while (w > width && width > 0) {
        const piece = takeStart(graphemes(rest), width) || graphemes(rest)[0];
        lines.push(piece);
        rest = rest.slice(piece.length);
        w = displayWidth(rest);
      }
      line = rest;
      used = w;
    }
    lines.push(line);
  }
  return lines;
}

/**
 * Wraps a sentence to lines of at most `width` columns at spaces, the lines after the first
 * starting with `indent`; a word is never broken (one wider than the line stands alone on it).
 * Colour escapes count as nothing.
 * @example wrapProse('govctl: the service cannot be reached', 20, '  ') // ['govctl: the service', '  cannot be reached']
 */
export function wrapProse(text: string, width: number, indent = ''): string[] {
  return fill(text, '', width, indent);
}

/**
 * A message line (`govctl: …`) as a stream shows it: on a terminal wrapped at spaces to its width
 * (80 when it does not say), continued two spaces in, so the terminal never breaks a word; piped,
 * the one line as it is.
 */
export function messageLines(text: string, out: { readonly isTTY: boolean; readonly columns: number | undefined }): string {
  return out.isTTY ? wrapProse(text, out.columns || 80, '  ').join('\n') : text;
}

/** Cuts or wraps one cell to `width` columns, as its column shrinks. */
export function fitCell(text: string, width: number, shrink: Shrink): string {
  switch (shrink) {
    case 'middle':
    case 'id':
      return truncateMiddle(text, width);
    case 'wrap':
      return wrapCell(text, width).join('\n');
    default:
      return truncateEnd(text, width);
  }
}

/** What {@link fitWidths} needs to know of one column. */
export interface ColumnWidth {
  /** its widest cell (header included), in display columns */
  natural: number;
  /** the narrowest it may become */
  min: number;
  /** shrinks only once every other column is at its minimum (ids) */
  last?: boolean;
}

/**
 * The content width of each column so that the widths plus `chrome` (borders and padding) fit in
 * `available` columns: while too wide, the widest column that may still shrink loses one column
 * (as gh does), so narrow columns keep their values and wide ones share the cut; columns marked
 * `last` (ids) shrink only once every other one is at its minimum. A column is never cut below its
 * minimum; when even the minimums do not fit, the table is as narrow as they allow.
 */
export function fitWidths(columns: readonly ColumnWidth[], chrome: number, available: number): number[] {
  const widths = columns.map((column) => column.natural);
  let excess = widths.reduce((sum, w) => sum + w, chrome) - available;
  while (excess > 0) {
    let widest = -1;
    for (const last of [false, true]) {
      for (let i = 0; i < widths.length; i++) {
        if ((columns[i].last === true) === last && widths[i] > columns[i].min && (widest < 0 || widths[i] > widths[widest])) widest = i;
      }
      if (widest >= 0) break;
    }
    if (widest < 0) break;
    widths[widest]--;
    excess--;
  }
  return widths;
}

/**
 * Wraps help text to `width` columns. Text that fits is left exactly as written (its line breaks
 * may be a list's). A run of lines with one indentation (a paragraph) holding a line that is too
 * wide is refilled as one paragraph, continuing under its indentation. Example lines (`  $ govctl
 * …`) stay whole so that they can be copied, and so does a word wider than the line.
 */
export function wrapHelpText(text: string, width: number): string {
  const lines = text.split('\n');
  const out: string[] = [];
  const indentOf = (line: string) => /^\s*/.exec(line)![0];
  const isParagraphLine = (line: string) => line.trim() !== '' && !/^\s*\$ /.test(line);
  for (let i = 0; i < lines.length;) {
    const line = lines[i];
    if (!isParagraphLine(line)) {
      out.push(line);
      i++;
      continue;
    }
    const indent = indentOf(line);
    let end = i + 1;
    while (end < lines.length && isParagraphLine(lines[end]) && indentOf(lines[end]) === indent) end++;
    const paragraph = lines.slice(i, end);
    if (paragraph.every((each) => displayWidth(each) <= width)) out.push(...paragraph);
    else {
      // `Usage: govctl …` continues under the command, not under `Usage:`.
      const hanging = /^\s*Usage: /.exec(paragraph[0])?.[0].replace(/\S/g, ' ');
      out.push(...fill(paragraph.map((each) => each.trim()).join(' '), indent, width, hanging));
    }
    i = end;
  }
  return out.join('\n');
}

/** Words filled into lines of at most `width` columns, the first starting with `indent`, the others with `hanging` (default `indent`). */
function fill(text: string, indent: string, width: number, hanging = indent): string[] {
  const out: string[] = [];
  let current = '';
  let lead = indent;
  let used = lead.length;
  for (const word of text.split(/ +/).filter(Boolean)) {
    const w = displayWidth(word);
    if (current !== '' && used + 1 + w > width) {
      out.push(lead + current);
      current = '';
      lead = hanging;
      used = lead.length;
    }
    used += (current === '' ? 0 : 1) + w;
    current += current === '' ? word : ` ${word}`;
  }
  out.push(lead + current);
  return out;
}
