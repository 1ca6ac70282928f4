// Build: esbuild bundles the CLI and the library entry points (ESM, code-split so that heavy
// modules load only in the commands that need them); tsc emits the library's type declarations.
// `--no-types` skips tsc (used before tests, where only the bundle matters). The output directory is
// written over, not deleted first, so that a test run reading dist/ never sees it vanish; `--clean`
// deletes it first.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';

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
  external: ['better-sqlite3', 'fastify', '@fastify/*'],
  // Bundled CommonJS dependencies call require(); give ESM chunks one.
  banner: { js: "import { createRequire as __govctlCreateRequire } from 'node:module'; const require = __govctlCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});

if (withTypes) {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--emitDeclarationOnly'], { stdio: 'inherit' });
}
