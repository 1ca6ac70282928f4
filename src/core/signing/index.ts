export * from './keys.js';
export * from './hmac.js';
export * from './ed25519.js';
