/**
 * What a store location names, without loading any backend: the CLI asks this before it loads the
 * server module (which loads SQLite, PostgreSQL and Fastify), open-store.ts dispatches on it, and everything that shows a
 * location (log lines, `govctl serve`'s start-up line, error messages) shows it through
 * {@link displayLocation}, so that the password a PostgreSQL URL may carry is never printed.
 */

/** Whether a location is a PostgreSQL URL (`postgres://` or `postgresql://`) rather than a SQLite file. */
export function isPostgresLocation(location: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(location);
}

/**
 * Whether a location looks like a URL of any scheme (`mysql://…`, `sqlite://…`, a mistyped
 * `postgre://…`): such a location is never taken for a file path (a file named `mysql:` would be
 * created otherwise).
 */
export function isUrlLike(location: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(location);
}

/** Query parameters of a libpq URL that never hold a secret, shown as they are; others are masked. */
const PLAIN_PARAMETERS = new Set(['sslmode', 'connect_timeout', 'application_name', 'target_session_attrs', 'options', 'host', 'port', 'dbname', 'user']);

/**
 * A location as it may be shown: a file path as it is; a URL with its password (and any query
 * parameter that may carry one) replaced by `***`, the user, host, port and database kept so that
 * the reader can tell which database is meant.
 *
 * @example displayLocation('postgres://govctl:s3cret@db:5432/gov?sslmode=require') // 'postgres://govctl:***@db:5432/gov?sslmode=require'
 */
export function displayLocation(location: string): string {
  if (!isUrlLike(location)) return location;
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    // unparsable: any part of it may be a secret
    return `${location.slice(0, location.indexOf('://') + 3)}(unparsable URL)`;
  }
  const user = url.username !== '' ? `${url.username}${url.password !== '' ? ':***' : ''}@` : url.password !== '' ? ':***@' : '';
  const query = [...url.searchParams]
    .map(([name, value]) => `${encodeURIComponent(name)}=${PLAIN_PARAMETERS.has(name.toLowerCase()) ? encodeURIComponent(value) : '***'}`)
    .join('&');
  return `${url.protocol}//${user}${url.host}${url.pathname}${query !== '' ? `?${query}` : ''}`;
}

/**
 * The secrets a location holds (its password, raw and decoded, and masked query values), for
 * scrubbing a message a library built from it. Empty for a file path.
 */
export function locationSecrets(location: string): string[] {
  if (!isUrlLike(location)) return [];
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    // the whole text after the scheme may hold it
    return [location.slice(location.indexOf('://') + 3)].filter((s) => s.length > 0);
  }
  const secrets = new Set<string>();
  if (url.password !== '') {
    secrets.add(url.password);
    try {
      secrets.add(decodeURIComponent(url.password));
    } catch {
      // not percent-encoded validly: the raw form is enough
    }
  }
  for (const [name, value] of url.searchParams) if (!PLAIN_PARAMETERS.has(name.toLowerCase()) && value !== '') secrets.add(value);
  // longest first, so that a secret containing another is replaced whole
  return [...secrets].sort((a, b) => b.length - a.length);
}

/** `text` with every secret of `location` replaced by `***`, and every URL in it shown by {@link displayLocation}. */
export function scrubLocation(text: string, location: string): string {
  let out = text;
  for (const secret of locationSecrets(location)) out = out.split(secret).join('***');
  return out.replace(/\bpostgres(?:ql)?:\/\/[^\s"'<>]+/gi, (url) => displayLocation(url));
}
