/**
 * The library's version, sent in `User-Agent: govctl/<version>`. Kept equal to package.json's
 * `version` (a test checks it), so that no bundle has to read package.json at run time.
 */
export const CLIENT_VERSION = '0.1.0';

/** The default `User-Agent` header. */
export const DEFAULT_USER_AGENT = `govctl/${CLIENT_VERSION}`;
