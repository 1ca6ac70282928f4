/** `govctl derive`. */
export { createDeriveCommand, run, type DeriveOptions } from './derive.js';
