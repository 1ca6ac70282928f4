// Build: esbuild bundles the CLI and the library entry points (ESM, code-split so that heavy
// modules load only in the commands that need them); tsc emits the library's type declarations.
// `--no-types` skips tsc (used before tests, where only the bundle matters). The output directory is
// written over, not deleted first, so that a test run reading dist/ never sees it vanish; `--clean`
// deletes it first.
import { build } from 'esbuild';
import { execFileSync, spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';

const withTypes = !process.argv.includes('--no-types');
if (process.argv.includes('--clean')) rmSync('dist', { recursive: true, force: true });

await build({
  entryPoints: {
    'cli/main': 'src/cli/main.ts',
    'lib/index': 'src/client/index.ts',
    'lib/core': 'src/core/index.ts',
    'lib/server': 'src/server/index.ts',
  },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: 'linked',
  // Native addon and the server framework stay in node_modules: they are loaded only by
  // `serve`, `admin` and the embedded store, and fastify's plugins resolve each other at run time.
  // typescript: cosmiconfig imports it only for .ts config files, which govctl does not read; bundled,
  // its 10 MB chunk would load with every config file found.
  external: ['better-sqlite3', 'fastify', '@fastify/*', 'typescript'],
  // Bundled CommonJS dependencies call require(); give ESM chunks one.
  banner: { js: "import { createRequire as __govctlCreateRequire } from 'node:module'; const require = __govctlCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});

// `govctl --help` is the most-run command there is: render the root help once, here, from the same
// program definition, so bin/govctl.js can print it without loading the CLI (docs/decisions.md).
const help = spawnSync(process.execPath, ['bin/govctl.js', '--help'], {
  encoding: 'utf8',
  env: { PATH: process.env.PATH ?? '', GOVCTL_NO_HELP_CACHE: '1' },
});
if (help.status !== 0 || !help.stdout.startsWith('Usage: govctl')) {
  throw new Error(`rendering the root help failed (exit ${help.status}): ${help.stderr}`);
}
writeFileSync('dist/cli/help.txt', help.stdout);

if (withTypes) {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--emitDeclarationOnly'], { stdio: 'inherit' });
}
