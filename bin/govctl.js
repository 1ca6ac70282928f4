#!/usr/bin/env node
// Entry point, CommonJS (bin/package.json) so that the two most-run answers cost little more than
// starting Node: `--version` from package.json, `--help` from the help the build rendered.
'use strict';
require('node:module').enableCompileCache?.();

const args = process.argv.slice(2);
const only = args.length === 1 ? args[0] : undefined;
if (only === '--version' || only === '-V') {
  process.stdout.write(`${require('../package.json').version}\n`);
} else if ((only === '--help' || only === '-h') && !process.env.GOVCTL_NO_HELP_CACHE && printHelp()) {
  // printed from dist/cli/help.txt
} else {
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

function printHelp() {
  try {
    process.stdout.write(require('node:fs').readFileSync(`${__dirname}/../dist/cli/help.txt`, 'utf8'));
    return true;
  } catch {
    return false;
  }
}
