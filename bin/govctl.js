#!/usr/bin/env node
// @ts-check
// Entry point, CommonJS (bin/package.json). `--version` is answered from package.json and `--help`
// from the help the build rendered (dist/cli/help.txt); every other run loads the command line,
// dist/cli/main.js, compiled with a V8 code cache, and a command that runs the service (the
// embedded store, `serve`, `admin`) loads dist/cli/service.js the same way (docs/architecture.md
// "Start-up").
'use strict';

const args = process.argv.slice(2);
const only = args.length === 1 ? args[0] : undefined;
if (only === '--version' || only === '-V') {
  process.stdout.write(`${require('../package.json').version}\n`);
} else if ((only === '--help' || only === '-h') && !process.env.GOVCTL_NO_HELP_CACHE && printHelp()) {
  // printed from dist/cli/help.txt
} else {
  /** @type {((argv: string[]) => Promise<number>) | undefined} */
  let main;
  try {
    main = /** @type {(argv: string[]) => Promise<number>} */ (loadBundle('main').main);
  } catch (error) {
    process.stderr.write(`govctl: cannot load the command line (${error instanceof Error ? error.message : String(error)}); run \`npm run build\`\n`);
    process.exitCode = 70; // EXIT.INTERNAL (src/cli/exit-codes.ts), which cannot be loaded either
  }
  if (main) main(args).then((code) => (process.exitCode = code));
}

/**
 * The exports of `dist/cli/<name>.js`, compiled with the code cache of this build, this Node, this
 * command group and connection when there is one. Node 20 has no compile cache of its own
 * (module.enableCompileCache is Node ≥ 22.1), and without one V8 compiles every function a run
 * calls from source. The cache lives in the user's cache directory ($XDG_CACHE_HOME/govctl, mode
 * 0700: compiled code is never read from a directory another user can write) and is written when
 * the run ends if there was none or V8 rejected it. A cache that cannot be read or written costs
 * only the time it would have saved.
 *
 * @param {string} name
 * @returns {Record<string, unknown>} the bundle's exports
 */
function loadBundle(name) {
  const fs = require('node:fs');
  const path = require('node:path');
  const Module = require('node:module');
  const file = path.join(__dirname, '..', 'dist', 'cli', `${name}.js`);
  // ASCII (the build checks), so Latin-1 is the same text without decoding UTF-8 first.
  const source = fs.readFileSync(file, 'latin1');
  const build = /\n\/\/ govctl-build ([0-9a-f]+)\n/.exec(source.slice(-256))?.[1];
  const cacheFile = build && cachePath(path, build, name);
  let cachedData;
  if (cacheFile) {
    try {
      cachedData = fs.readFileSync(cacheFile);
    } catch {
      // none yet
    }
  }
  // The file is the function Module.wrap would make of a CommonJS module, with this loader as one
  // more parameter: the command line loads the service file through it (scripts/build.mjs).
  const script = new (require('node:vm').Script)(source, { filename: file, cachedData });
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, Module.createRequire(file), module, file, path.dirname(file), loadBundle);
  if (cacheFile && (cachedData === undefined || script.cachedDataRejected)) {
    // At the end, so that the cache holds every function the run compiled, not only the top level.
    process.once('exit', () => {
      try {
        const dir = path.dirname(cacheFile);
        fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
        const temporary = `${cacheFile}.${process.pid}`;
        fs.writeFileSync(temporary, script.createCachedData(), { mode: 0o600 });
        fs.renameSync(temporary, cacheFile);
        // Caches of earlier builds are never read again.
        for (const other of fs.readdirSync(dir)) {
          if (other.startsWith('cli-') && !other.startsWith(`cli-${build}-`)) fs.rmSync(path.join(dir, other), { force: true });
        }
      } catch {
        // read-only or full: the next run compiles as this one did
      }
    });
  }
  return module.exports;
}

/**
 * `<cache dir>/govctl/cli-<build>-<node>-<group>[-local][-service].v8` (`-service` for the service's
 * file), or undefined without a cache directory.
 *
 * @param {typeof import('node:path')} path
 * @param {string} build
 * @param {string} name
 */
function cachePath(path, build, name) {
  const env = process.env;
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : env.HOME ? path.join(env.HOME, '.cache') : undefined;
  if (!base) return undefined;
  // Each command group compiles different code, and a run against the embedded store compiles
  // the service too: one cache each, so that a run never reads code it does not run. Which
  // connection a run uses is guessed from its arguments and environment (a config file can name a
  // service too); a wrong guess costs time, never an answer.
  const group = /^[a-z][a-z-]{0,20}$/.test(args[0] ?? '') ? args[0] : 'root';
  const flag = args.findIndex((arg) => arg === '--base-url' || arg.startsWith('--base-url='));
  const baseUrl = flag < 0 ? env.GOVCTL_BASE_URL || env.SERVICE_BASE_URL : args[flag].startsWith('--base-url=') ? args[flag].slice(11) : args[flag + 1];
  const local = baseUrl === undefined || baseUrl === '' || baseUrl === 'local';
  return path.join(base, 'govctl', `cli-${build}-${process.version}-${group}${local ? '-local' : ''}${name === 'main' ? '' : `-${name}`}.v8`);
}

/** Prints the root help the build rendered; false when it is missing (the command line renders it). */
function printHelp() {
  try {
    process.stdout.write(require('node:fs').readFileSync(`${__dirname}/../dist/cli/help.txt`, 'utf8'));
    return true;
  } catch {
    return false;
  }
}
