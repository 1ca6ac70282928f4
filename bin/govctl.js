#!/usr/bin/env node
// Entry point: kept tiny so that `govctl --version` costs little more than starting Node.
import module from 'node:module';

module.enableCompileCache?.();
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const { readFileSync } = await import('node:fs');
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`${pkg.version}\n`);
} else {
  const { main } = await import('../dist/cli/main.js');
  process.exitCode = await main(args);
}
