/**
 * Text that a service (or anyone posing as one) supplied, made safe to print on a terminal, and
 * base URLs made safe to print anywhere (docs/security.md "Terminal output and local files").
 *
 * A terminal obeys what it is sent: an ESC sequence can retitle the window, write to the clipboard
 * (OSC 52), draw a fake prompt or hide the rest of a line, and a bidi override reorders what a
 * reader sees (`gk_…` shown as something else, a system name that reads backwards). Every renderer
 * of text output (tables, piped lines, fields, notices, error messages) passes service text through
 * {@link terminalText}; `--json` is printed exactly as received (JSON escapes the C0 controls).
 */

/**
 * C0 controls (tab and line breaks included: in a table cell they forge rows), DEL, C1 controls
 * (0x9B is a one-byte CSI), the Arabic letter mark, LRM/RLM, the bidi embeddings and overrides
 * U+202A–202E, the isolates U+2066–2069, and the line/paragraph separators U+2028/2029.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** One unsafe character as a visible escape: `\x1b`, `\x9b`, `\u202e`. */
function escape(char: string): string {
  const code = char.codePointAt(0)!;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * Neutralises control characters, ESC sequences and bidi controls as visible escapes (`\x1b[2J`
 * prints as those six characters, not a cleared screen). Printable text, including every other
 * non-ASCII character, is kept as it is.
 *
 * @example terminalText('loan\x1b]0;pwned\x07') // 'loan\\x1b]0;pwned\\x07'
 */
export function terminalText(text: string): string {
  return text.replace(UNSAFE, escape);
}

/**
 * A base URL as it may be shown: without its userinfo (`user:password@`) or query string, each
 * replaced by `***` so that the reader knows something was there. A value that does not parse as a
 * URL is not shown at all beyond its scheme-like start: it may hold a secret in any shape.
 *
 * @example displayUrl('http://u:pw@127.0.0.1:8080/x?token=s') // 'http://***@127.0.0.1:8080/x?***'
 */
export function displayUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return value === 'local' ? value : '(not a URL)';
  }
  const userinfo = url.username !== '' || url.password !== '';
  const query = url.search !== '';
  const hash = url.hash !== '';
  const path = url.pathname === '/' && !value.replace(/[?#].*$/, '').endsWith('/') ? '' : url.pathname;
  return terminalText(`${url.protocol}//${userinfo ? '***@' : ''}${url.host}${path}${query ? '?***' : ''}${hash ? '#***' : ''}`);
}

/**
 * The part of a base URL that requests go to (scheme, host, port, path), for naming the service in
 * traces: the transport sends no userinfo (it refuses it) and drops the query, so neither is shown.
 */
export function serviceAddress(value: string): string {
  try {
    const url = new URL(value);
    return terminalText(`${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`);
  } catch {
    return '(not a URL)';
  }
}

/** Every URL inside a line of text shown as {@link displayUrl} shows it (a `-v` trace, a notice). */
export function redactUrls(text: string): string {
  // Punctuation that ends the URL's sentence (`points to http://h:1, and`, `(http://h:1)`) is not
  // the URL's: left on, it makes the port unparseable and the whole URL `(not a URL)`.
  return text.replace(/\bhttps?:\/\/[^\s"'<>]+/gi, (match) => {
    const url = match.replace(/[.,;:!?)\]}]+$/, '');
    return displayUrl(url) + match.slice(url.length);
  });
}
