/** `govctl completion` and the hidden `govctl __complete` that its scripts ask. */
export { createCompleteCommand, createCompletionCommand, run, type CompletionOptions } from './completion.js';
