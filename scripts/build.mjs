// Build: esbuild bundles the library entry points and the command line; tsc emits the library's
// type declarations.
// `--no-types` skips tsc (used before tests, where only the bundle matters). The output directory is
// written over, not deleted first, so that a test run reading dist/ never sees it vanish; `--clean`
// deletes it first.
import { build } from 'esbuild';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

// Builtins that a bundled dependency requires when it loads but uses only on paths few runs take:
// commander's child_process (executable subcommands, which govctl has none of), and Fastify's https,
// http2 and dns (TLS and HTTP/2 servers, which `serve` never makes, and dns.lookup when listening on
// `localhost`, as `serve --host localhost` does). Loaded at once, they cost every run of the command
// line 3-6 ms; here each becomes an object that requires the builtin on the first property read, so
// a path that does use one still gets it (each importer only reads properties of these modules).
const LAZY_BUILTINS = [
  { importer: /[\\/]node_modules[\\/]commander[\\/]/, builtins: ['child_process'] },
  { importer: /[\\/]node_modules[\\/]fastify[\\/]lib[\\/]server\.js$/, builtins: ['https', 'http2', 'dns'] },
];
const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(b) {
    b.onResolve({ filter: /^(node:)?(child_process|https|http2|dns)$/ }, (args) => {
      const name = args.path.replace(/^node:/, '');
      return LAZY_BUILTINS.some(({ importer, builtins }) => importer.test(args.importer) && builtins.includes(name))
        ? { path: name, namespace: 'lazy-builtin' }
        : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({
      contents: `module.exports = new Proxy({}, { get: (_, key) => require('node:${args.path}')[key] });`,
      loader: 'js',
    }));
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
  // each store's schema.sql is imported as its text (src/sql.d.ts)
  loader: { '.sql': 'text' },
  logLevel: 'warning',
});

// The commit the build is made from, for `govctl version`; "unknown" without git or a checkout.
let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || 'unknown';
} catch {
  // not a git checkout (a tarball), or no git
}

/**
 * What each command-line file starts with: the parameters Node gives a CommonJS module (Module.wrap),
 * and the loader of the command line's files (bin/govctl.js `loadBundle`).
 */
const CJS_WRAPPER = '(function (exports, require, module, __filename, __dirname, loadBundle) {';

// The service in the command line (the embedded store, `serve`, `admin`) is dist/cli/service.js,
// loaded through bin/govctl.js like main.js: an import of src/server/index.ts from src/cli becomes
// `loadBundle('service')`. Type-only imports are erased before they reach this.
const SERVER_INDEX = resolve('src/server/index.js');
const serviceBundle = {
  name: 'service-bundle',
  setup(b) {
    b.onResolve({ filter: /^\.\.?\/.*server\/index\.js$/ }, (args) =>
      resolve(args.resolveDir, args.path) === SERVER_INDEX && /[\\/]src[\\/]cli[\\/]/.test(args.importer)
        ? { path: 'service', namespace: 'service-bundle' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'service-bundle' }, () => ({ contents: "module.exports = loadBundle('service');", loader: 'js' }));
  },
};

// The command line: two CommonJS files that bin/govctl.js compiles, each with a V8 code cache
// (docs/architecture.md "Start-up"): dist/cli/main.js, the commands (commander, the client,
// cosmiconfig, cli-table3, the MCP server, …), and dist/cli/service.js, the service (Fastify, the
// routes, the store), which only the embedded store, `serve` and `admin` load, so that a command
// against a service reads a third of the bytes. What a file holds is in it so that its code cache
// covers it; a module is initialised only when a command first requires it (esbuild wraps each in
// a lazy initialiser, and dynamic import() becomes require()), so a run pays only for what it uses.
// The service file has its own copy of core: what crosses between the two is data (requests,
// replies, strings, option objects) and the service's own error classes.
// better-sqlite3's JavaScript is bundled, so that the code cache covers it (loaded from
// node_modules it cost the embedded store about 4 ms of resolving and compiling); its addon stays
// in node_modules, found by store/sqlite/database.ts, which is why `bindings`, better-sqlite3's own
// way of finding it, stays out. undici stays there too (1 MB, needed only behind a proxy):
// bundled, every run would read it.
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
  // Every run reads the whole file: without whitespace and comments it is smaller and pure ASCII
  // (esbuild escapes non-ASCII in code; comments kept it). Licence comments go to *.LEGAL.txt.
  minifyWhitespace: true,
  legalComments: 'linked',
  external: ['bindings', 'sodium-native', 'typescript', 'undici'],
  plugins: [noChalkDetection, lazyBuiltins, serviceBundle],
  // import.meta.url (the verify worker's and package.json's paths) from the file's own name.
  define: { 'import.meta.url': '__govctlFileUrl', __GOVCTL_COMMIT__: JSON.stringify(commit) },
  // Each file is one function expression taking what Node gives a CommonJS module, which
  // bin/govctl.js compiles as it is: wrapped at run time (Module.wrap), the source would be
  // copied into a new string before V8 could compile it, on every run.
  banner: { js: `${CJS_WRAPPER}var __govctlFileUrl = require('node:url').pathToFileURL(__filename).href;` },
  // The build id names the code caches made for exactly these files (bin/govctl.js).
  footer: { js: `})\n// govctl-build ${randomBytes(12).toString('hex')}` },
  // each store's schema.sql is imported as its text (src/sql.d.ts)
  loader: { '.sql': 'text' },
  logLevel: 'warning',
});
// bin/govctl.js reads the files as Latin-1, which gives V8 their bytes as they are: UTF-8 would be
// decoded first. The two agree only on ASCII, which esbuild writes (it escapes other characters)
// and this checks.
for (const file of ['dist/cli/main.js', 'dist/cli/service.js']) {
  const bytes = readFileSync(file);
  const nonAscii = bytes.findIndex((byte) => byte > 0x7f);
  if (nonAscii !== -1) throw new Error(`${file} is not ASCII (byte ${bytes[nonAscii]} at offset ${nonAscii}); bin/govctl.js reads it as Latin-1`);
  if (!bytes.subarray(0, CJS_WRAPPER.length).equals(Buffer.from(CJS_WRAPPER))) throw new Error(`${file} does not start with its function wrapper`);
}
// What earlier builds wrote and this one did not (chunks under other hashes, files of an earlier
// design) goes: `npm pack` takes the whole of dist/, and a package made in a long-lived checkout
// would otherwise carry every chunk ever built. Only files no current file refers to are removed,
// so a test run reading dist/ still never sees a file it uses vanish.
const written = new Set([...Object.keys(library.metafile.outputs), ...Object.keys(commandLine.metafile.outputs)].map((file) => resolve(file)));
for (const dir of ['dist/lib', 'dist/chunks', 'dist/cli']) {
  for (const name of readdirSync(dir)) {
    const file = resolve(dir, name);
    if (!written.has(file) && !['help.txt', 'package.json'].includes(name)) rmSync(file, { force: true });
  }
}
// dist/cli/*.js are CommonJS in an ESM package.
writeFileSync('dist/cli/package.json', '{ "type": "commonjs" }\n');

// `govctl --help` is the most-run command there is: render the root help once, here, from the same
// program definition, so bin/govctl.js can print it without loading the command line.
const help = spawnSync(process.execPath, ['bin/govctl.js', '--help'], {
  encoding: 'utf8',
  env: { PATH: process.env.PATH ?? '', GOVCTL_NO_HELP_CACHE: '1' },
});
if (help.status !== 0 || !help.stdout.startsWith('Usage: govctl')) {
  throw new Error(`rendering the root help failed (exit ${help.status}): ${help.stderr}`);
}
writeFileSync('dist/cli/help.txt', help.stdout);

if (withTypes) {
  // Emitted afresh: a declaration of a source file since removed would otherwise ship in the package.
  rmSync('dist/types', { recursive: true, force: true });
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--emitDeclarationOnly'], { stdio: 'inherit' });
}
