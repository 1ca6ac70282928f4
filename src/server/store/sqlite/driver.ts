/**
 * better-sqlite3, in the major that works on this Node: 13 (Node-API, prebuilt in its package) on
 * Node 22 and later, 12 on Node 20, where 13 crashes. 12 cannot serve Node 24: its objects are
 * Node's ObjectWrap, whose destructor on Node 24 aborts the process when the garbage collector
 * runs it outside a JavaScript context (at exit, or between two callbacks). Both majors have the
 * same API: code that opens a database takes {@link Database} from here, never from `better-sqlite3`
 * (whose types, the same for both, stay imported by name).
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

/** The package name of the better-sqlite3 major this Node loads. */
export const SQLITE_DRIVER = NODE_MAJOR >= 22 ? 'better-sqlite3-13' : 'better-sqlite3';

/** better-sqlite3's Database class. */
export const Database = createRequire(import.meta.url)(SQLITE_DRIVER) as typeof BetterSqlite3;
