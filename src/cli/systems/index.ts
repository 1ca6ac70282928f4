/** `govctl systems`. */
export { createSystemsCommand, run, type SystemsOptions } from './systems.js';
