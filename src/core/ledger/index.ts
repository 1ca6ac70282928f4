/** The transparency log's formats: RFC 9162 Merkle trees, C2SP signed notes, checkpoints, cosignatures, tiles, and govctl's leaf entry. Pure. */
export * from './errors.js';
export * from './merkle.js';
export * from './tiles.js';
export * from './note.js';
export * from './cosignature.js';
export * from './checkpoint.js';
export * from './entry.js';
