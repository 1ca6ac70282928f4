/** govctl/core: record types, canonical JSON, signatures and hashing. No network, files or process. */
export * from './canonical-json.js';
export * from './records/index.js';
export * from './signing/index.js';
export * from './hashing.js';
export * from './attestations.js';
export * from './controls/index.js';
export * from './ledger/index.js';
export * from './verdicts.js';
