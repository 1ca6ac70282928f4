/** The SQLite backend behind a service's store interface, for tests that look at its tables. */
import type { Store } from '../../src/server/store/store.js';
import { SqliteStore } from '../../src/server/store/sqlite/store.js';

export function sqliteOf(store: Store): SqliteStore {
  if (!(store instanceof SqliteStore)) throw new Error(`the store is ${store.backend}, not SQLite`);
  return store;
}
