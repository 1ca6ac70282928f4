export * from './keys.js';
export * from './hmac.js';
export * from './ed25519.js';
export { ed25519Backend, type Ed25519Backend } from './ed25519-verifier.js';
export * from './dsse.js';
