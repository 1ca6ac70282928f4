/** Word wrapping for terminal output (the gate reasons and derive's control lists are long). */

/**
 * Wraps text at spaces so that no line is longer than `width` (a word longer than that stays
 * whole on its own line), and indents every line by `indent`.
 * @example wrapText('a b c', 3, '  ') // ['  a b', '  c']
 */
export function wrapText(text: string, width: number, indent = ''): string[] {
  const room = Math.max(20, width - indent.length);
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line === '') line = word;
    else if (line.length + 1 + word.length <= room) line += ` ${word}`;
    else {
      lines.push(indent + line);
      line = word;
    }
  }
  if (line !== '' || lines.length === 0) lines.push(indent + line);
  return lines;
}
