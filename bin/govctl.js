#!/usr/bin/env node
// Entry point, CommonJS (bin/package.json) so that the most-run answers cost little more than
// starting Node: `--version` from package.json, `--help` from the help the build rendered, and
// `gates check` in CI from the fast path's single file.
'use strict';
require('node:module').enableCompileCache?.();

const args = process.argv.slice(2);
const only = args.length === 1 ? args[0] : undefined;
if (only === '--version' || only === '-V') {
  process.stdout.write(`${require('../package.json').version}\n`);
} else if ((only === '--help' || only === '-h') && !process.env.GOVCTL_NO_HELP_CACHE && printHelp()) {
  // printed from dist/cli/help.txt
} else if (args[0] === 'gates' && args[1] === 'check') {
  // A CI gate: the fast path (src/cli/fast-path.ts) answers without loading the full command line,
  // or hands over (null) before it has written anything. It never rejects once it runs (its session
  // renders every error); a failure to load it hands over too, never a bare exit 1 (a soft fail).
  fastPath().then(
    (code) => (code === null ? runMain() : (process.exitCode = code)),
    () => runMain(),
  );
} else {
  runMain();
}

function runMain() {
  import('../dist/cli/main.js').then(
    async ({ main }) => {
      process.exitCode = await main(args);
    },
    (error) => {
      process.stderr.write(`govctl: cannot load the command line (${error.message}); run \`npm run build\`\n`);
      process.exitCode = 70;
    },
  );
}

/**
 * The fast path's exit code, or null to run the full command line. dist/cli/fast-path.cjs is
 * compiled with the V8 code cache the build wrote for it (scripts/build.mjs), used only when its
 * build id matches the file's; GOVCTL_WRITE_FAST_PATH_CACHE=<build id> (the build) writes it.
 */
async function fastPath() {
  const fs = require('node:fs');
  const file = `${__dirname}/../dist/cli/fast-path.cjs`;
  let source;
  try {
    source = fs.readFileSync(file, 'utf8');
  } catch {
    return null; // not built: the full command line says so
  }
  const id = /\n\/\/ govctl-build ([0-9a-f]+)\n/.exec(source.slice(-256))?.[1];
  const cacheFile = file.replace(/\.cjs$/, '.cache');
  const writeCache = id !== undefined && process.env.GOVCTL_WRITE_FAST_PATH_CACHE === id;
  let cachedData;
  if (id && !writeCache) {
    try {
      const cache = fs.readFileSync(cacheFile);
      if (cache.subarray(0, id.length + 1).toString('latin1') === `${id}\n`) cachedData = cache.subarray(id.length + 1);
    } catch {
      // no cache: compile as usual
    }
  }
  const Module = require('node:module');
  const script = new (require('node:vm').Script)(Module.wrap(source), { filename: file, cachedData });
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, Module.createRequire(file), module, file, require('node:path').dirname(file));
  const code = await module.exports.runFastPath(args);
  if (writeCache) fs.writeFileSync(cacheFile, Buffer.concat([Buffer.from(`${id}\n`, 'latin1'), script.createCachedData()]));
  return code;
}

function printHelp() {
  try {
    process.stdout.write(require('node:fs').readFileSync(`${__dirname}/../dist/cli/help.txt`, 'utf8'));
    return true;
  } catch {
    return false;
  }
}
