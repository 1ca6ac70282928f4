// Build: esbuild bundles the library entry points and the command line; tsc emits the library's
// type declarations.
// `--no-types` skips tsc (used before tests, where only the bundle matters). The output directory is
// written over, not deleted first, so that a test run reading dist/ never sees it vanish; `--clean`
// deletes it first.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const withTypes = !process.argv.includes('--no-types');
if (process.argv.includes('--clean')) rmSync('dist', { recursive: true, force: true });

// chalk's own colour detection (its #supports-color, which loads node:tty) is never used: io.ts
// decides colour (NO_COLOR, FORCE_COLOR, --no-color, the TTY) and gives every Chalk its level.
const noChalkDetection = {
  name: 'no-chalk-detection',
  setup(b) {
    b.onResolve({ filter: /^#supports-color$/ }, () => ({ path: 'supports-color', namespace: 'no-chalk-detection' }));
    b.onLoad({ filter: /.*/, namespace: 'no-chalk-detection' }, () => ({ contents: 'export default { stdout: false, stderr: false };', loader: 'js' }));
  },
};

// The library entry points (ESM, code-split): govctl, govctl/core, govctl/server. The native
// addons and the server framework stay in node_modules (the package's dependencies); fastify's
// plugins resolve each other at run time.
const library = await build({
  metafile: true,
  entryPoints: {
    'lib/index': 'src/client/index.ts',
    'lib/core': 'src/core/index.ts',
    'lib/server': 'src/server/index.ts',
    // the verify pool's worker (src/server/verify-pool.ts), a file of its own for new Worker()
    'lib/verify-worker': 'src/server/verify-worker.ts',
  },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: 'linked',
  external: ['better-sqlite3', 'fastify', '@fastify/*', 'typescript', 'sodium-native'],
  plugins: [noChalkDetection],
  // Classes keep their names: a class whose static members esbuild lowers is bound as `_Name`
  // (ValidationError, GovernanceClient), and a user's inspected error would read `_ValidationError`.
  keepNames: true,
  // Bundled CommonJS dependencies call require(); give ESM chunks one.
  banner: { js: "import { createRequire as __govctlCreateRequire } from 'node:module'; const require = __govctlCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});

// The commit the build is made from, for `govctl version`; "unknown" without git or a checkout.
let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || 'unknown';
} catch {
  // not a git checkout (a tarball), or no git
}

// The service in the command line (the embedded store, `serve`, `admin`) is dist/cli/service.js, a
// file of its own that only those commands load: an import of src/server/index.ts from src/cli
// becomes `require('./service.js')`, so a command against a remote service reads a third of the
// bytes. Type-only imports are erased before they reach this.
const SERVER_INDEX = resolve('src/server/index.js');
const serviceBundle = {
  name: 'service-bundle',
  setup(b) {
    b.onResolve({ filter: /^\.\.?\/.*server\/index\.js$/ }, (args) =>
      resolve(args.resolveDir, args.path) === SERVER_INDEX && /[\\/]src[\\/]cli[\\/]/.test(args.importer)
        ? { path: './service.js', external: true }
        : undefined,
    );
  },
};

// The command line: two CommonJS files, dist/cli/main.js (the commands: commander, the client,
// cosmiconfig, cli-table3, the MCP server, …) and dist/cli/service.js (Fastify, the routes, the
// store). A module is initialised only when a command first requires it (esbuild wraps each in a
// lazy initialiser, and dynamic import() becomes require()), so a run pays only for what it uses.
// The service file has its own copy of core: what crosses between the two is data (requests,
// replies, strings, option objects) and the service's own error classes. The native addons stay in
// node_modules; undici too (1 MB, needed only behind a proxy).
const commandLine = await build({
  metafile: true,
  entryPoints: { 'cli/main': 'src/cli/main.ts', 'cli/service': 'src/server/index.ts' },
  outdir: 'dist',
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  supported: { 'dynamic-import': false },
  sourcemap: 'linked',
  // Every run reads the whole file: without white space and comments there is less to read and parse.
  minifyWhitespace: true,
  legalComments: 'linked',
  external: ['better-sqlite3', 'sodium-native', 'typescript', 'undici'],
  plugins: [noChalkDetection, serviceBundle],
  // import.meta.url (the verify worker's and package.json's paths) from the file's own name.
  define: { 'import.meta.url': '__govctlFileUrl', __GOVCTL_COMMIT__: JSON.stringify(commit) },
  banner: { js: "var __govctlFileUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
});
// What earlier builds wrote and this one did not (chunks under other hashes, files of an earlier
// design) goes: `npm pack` takes the whole of dist/, and a package made in a long-lived checkout
// would otherwise carry every chunk ever built. Only files no current file refers to are removed,
// so a test run reading dist/ still never sees a file it uses vanish.
const written = new Set([...Object.keys(library.metafile.outputs), ...Object.keys(commandLine.metafile.outputs)].map((file) => resolve(file)));
for (const dir of ['dist/lib', 'dist/chunks', 'dist/cli']) {
  for (const name of readdirSync(dir)) {
    const file = resolve(dir, name);
    if (!written.has(file) && name !== 'package.json') rmSync(file, { force: true });
  }
}
// dist/cli/*.js are CommonJS in an ESM package.
writeFileSync('dist/cli/package.json', '{ "type": "commonjs" }\n');

if (withTypes) {
  // Emitted afresh: a declaration of a source file since removed would otherwise ship in the package.
  rmSync('dist/types', { recursive: true, force: true });
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--emitDeclarationOnly'], { stdio: 'inherit' });
}
