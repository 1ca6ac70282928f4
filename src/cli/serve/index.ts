/** `govctl serve`. */
export { createServeCommand, run, type ServeOptions } from './serve.js';
