/**
 * What a store location names, without loading any backend: the CLI asks this before it loads
 * the server module (style.md rule 10), and open-store.ts dispatches on it.
 */

/** Whether a location is a PostgreSQL URL (`postgres://` or `postgresql://`) rather than a SQLite file. */
export function isPostgresLocation(location: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(location);
}

/** A location as it may be shown: a URL without its password (and query, which may carry one). */
export function displayLocation(location: string): string {
  if (!isPostgresLocation(location)) return location;
  try {
    const url = new URL(location);
    url.password = '';
    url.search = '';
    return url.toString();
  } catch {
    return 'the PostgreSQL URL given (unparsable)';
  }
}
