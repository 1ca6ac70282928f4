/**
 * Long work never holds the event loop for long in one piece (docs/security.md, "Fair turns"): a
 * group commit stops taking writes once they have run for MAX_GROUP_MS and commits the rest in a
 * later group, a turn of the event loop later, every write still acknowledged after its own commit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteOnly } from '../helpers/backend.js';
import { openDatabase, type Db } from '../../src/server/store/sqlite/database.js';
import { GroupCommitWriter, MAX_GROUP_MS } from '../../src/server/store/sqlite/writer.js';

let db: Db | undefined;
afterEach(() => {
  db?.close();
  db = undefined;
});

/** The group's clock: each write moves it on by the time it is taken to run. */
const clock = { ms: 0 };

// SQLite-only: SQLite's GroupCommitWriter on a raw connection. PostgreSQL's group commit:
// test/server/postgres/group-commit.test.ts.
describe.skipIf(sqliteOnly)('group commit under large writes', () => {
  it(`stops a group once its writes have run ${MAX_GROUP_MS} ms and commits the rest in later groups, in order`, async () => {
    db = openDatabase(':memory:');
    db.exec('CREATE TABLE t (n INTEGER)');
    let groups = 0;
    const writer = new GroupCommitWriter(db, { begin() {}, end: () => void (groups += 1) }, undefined, () => clock.ms);
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    // each write runs for 40 % of a group's time: a group takes three
    const writes = Array.from({ length: 10 }, (_, n) =>
      writer.write(() => {
        clock.ms += MAX_GROUP_MS * 0.4;
        insert.run(n);
        return n;
      }),
    );
    // other work queued meanwhile runs between two groups, not after all ten writes
    let otherWorkAfter = -1;
    let committed = 0;
    for (const write of writes) void write.then(() => (committed += 1));
    setImmediate(() => (otherWorkAfter = committed));

    expect(await Promise.all(writes)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(groups).toBe(4);
    expect(otherWorkAfter).toBe(3);
    expect(db.prepare('SELECT n FROM t ORDER BY rowid').pluck().all()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});
