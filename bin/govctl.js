#!/usr/bin/env node
// Entry point: turn on Node's compile cache where Node has one, then run the command line
// (dist/cli/main.js) and hand its exit code to Node.
import { mkdirSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { createRequire } from 'node:module';
import { isAbsolute, join } from 'node:path';

enableCompileCache();

let main;
try {
  // required, not imported: importing a CommonJS file makes Node scan its whole text for export names first
  ({ main } = createRequire(import.meta.url)('../dist/cli/main.js'));
} catch (error) {
  const why = (error instanceof Error ? error.message : String(error)).split('\n')[0];
  process.stderr.write(`govctl: cannot load the command line (${why}); run \`npm run build\`\n`);
  process.exitCode = 70; // EXIT.INTERNAL (src/cli/exit-codes.ts), which cannot be loaded either
}
if (main) process.exitCode = await main(process.argv.slice(2));

/**
 * Node's compile cache (module.enableCompileCache, Node 22.1 and later) keeps the code V8 compiled
 * for govctl's files, so later runs start without compiling them again; Node 20 has none. The
 * cache lives in the user's cache directory ($XDG_CACHE_HOME/govctl, default ~/.cache/govctl, mode
 * 0700): compiled code is executed as it is, so it is never read from a directory another user can
 * write. Without a home, or where the directory cannot be made, runs compile from source.
 */
function enableCompileCache() {
  if (typeof nodeModule.enableCompileCache !== 'function' || process.env.NODE_DISABLE_COMPILE_CACHE) return;
  const env = process.env;
  const base = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : env.HOME ? join(env.HOME, '.cache') : undefined;
  if (!base) return;
  const dir = join(base, 'govctl');
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    nodeModule.enableCompileCache(dir);
  } catch {
    // read-only or full: this run compiles from source
  }
}
