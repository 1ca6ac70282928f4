/** `govctl completion`. */
export { createCompletionCommand, run, type CompletionOptions } from './completion.js';
