/**
 * The notice that commands use the embedded store because nothing is configured is said once per
 * data directory, not on every command (docs/cli.md "The embedded store"): a marker file in the
 * directory remembers that a run said it. `govctl config show` says where commands go at any time.
 */
import { closeSync, existsSync, openSync } from 'node:fs';
import { join } from 'node:path';

/** The marker's name in the data directory. */
export const LOCAL_NOTICE_MARKER = '.local-store-notice-shown';

/** Whether a run has said the notice for this data directory. */
export function localNoticeShown(dataDir: string): boolean {
  return existsSync(join(dataDir, LOCAL_NOTICE_MARKER));
}

/**
 * Remembers that the notice was said. Written 0600 like everything else in the directory; a
 * directory that cannot be written to only means the notice comes again.
 */
export function rememberLocalNotice(dataDir: string): void {
  try {
    closeSync(openSync(join(dataDir, LOCAL_NOTICE_MARKER), 'a', 0o600));
  } catch {
    // read-only or full: the next run says it again
  }
}
