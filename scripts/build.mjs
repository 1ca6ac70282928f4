// Build: esbuild bundles the CLI and the library entry points (ESM, code-split so that heavy
// modules load only in the commands that need them); tsc emits the library's type declarations.
// `--no-types` skips tsc (used before tests, where only the bundle matters). The output directory is
// written over, not deleted first, so that a test run reading dist/ never sees it vanish; `--clean`
// deletes it first.
import { build } from 'esbuild';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

await build({
  entryPoints: {
    'cli/main': 'src/cli/main.ts',
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
  // Native addon and the server framework stay in node_modules: they are loaded only by
  // `serve`, `admin` and the embedded store, and fastify's plugins resolve each other at run time.
  // typescript: cosmiconfig imports it only for .ts config files, which govctl does not read; bundled,
  // its 10 MB chunk would load with every config file found.
  external: ['better-sqlite3', 'fastify', '@fastify/*', 'typescript', 'sodium-native'],
  plugins: [noChalkDetection],
  // Bundled CommonJS dependencies call require(); give ESM chunks one.
  banner: { js: "import { createRequire as __govctlCreateRequire } from 'node:module'; const require = __govctlCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});

// The fast path of `govctl gates check` (src/cli/fast-path.ts): one CommonJS file that bin/govctl.js
// compiles with a V8 code cache (below), so a CI gate costs little more than starting Node. What it
// never uses stays out: undici (proxies only), cosmiconfig (YAML and JS config files) and cli-table3
// (tables) are require()d from node_modules on demand. Dynamic import() becomes require(): the file
// runs in a vm.Script, which has no ESM loader. The build id in its last line names the cache built
// for exactly this file.
const buildId = randomBytes(12).toString('hex');
await build({
  entryPoints: { 'cli/fast-path': 'src/cli/fast-path.ts' },
  outdir: 'dist',
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  supported: { 'dynamic-import': false },
  sourcemap: 'linked',
  external: ['better-sqlite3', 'fastify', '@fastify/*', 'typescript', 'undici', 'cosmiconfig', 'cli-table3'],
  plugins: [
    noChalkDetection,
    {
      // factory.ts opens the embedded store with import('../server/index.js'); the fast path hands
      // the embedded store to the full command line before it could get there.
      name: 'no-embedded-store',
      setup(b) {
        b.onResolve({ filter: /\/server\/index\.js$/ }, () => ({ path: 'embedded-store', namespace: 'fast-path' }));
        b.onLoad({ filter: /.*/, namespace: 'fast-path' }, () => ({
          contents: "export function openLocalStore() { throw new Error('the embedded store is not part of the fast path'); }",
          loader: 'js',
        }));
      },
    },
  ],
  footer: { js: `// govctl-build ${buildId}` },
  logLevel: 'warning',
});

// The code cache: bin/govctl.js runs one real `gates check --json` against a throw-away service
// and writes what V8 compiled (the functions that run, not just the top level) to
// dist/cli/fast-path.cache, headed by the build id. Without it (or with another Node) the fast
// path compiles as usual.
await writeFastPathCache(buildId);

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

/** Runs the fast path once against an in-memory service so that bin/govctl.js writes its code cache. */
async function writeFastPathCache(id) {
  const cacheFile = 'dist/cli/fast-path.cache';
  rmSync(cacheFile, { force: true });
  const { provision, startServer } = await import('../dist/lib/server.js');
  const dir = mkdtempSync(join(tmpdir(), 'govctl-build-'));
  const db = join(dir, 'cache.db');
  const identity = provision(db, { orgName: 'build', workspaceName: 'build', userEmail: 'build@example.com' });
  const server = await startServer({ host: '127.0.0.1', port: 0, db, logLine: () => {} });
  try {
    // Asynchronously: the service answers from this process.
    const run = await runNode(['bin/govctl.js', 'gates', 'check', '--json'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: dir,
        SERVICE_BASE_URL: server.url,
        SERVICE_API_KEY: identity.api_key,
        GOVCTL_WRITE_FAST_PATH_CACHE: `${id}`,
      },
    });
    // An empty workspace fails its blocking gate: exit 2 with the gate list is the expected run.
    if (run.code !== 2 || !run.stdout.startsWith('{"gates":')) {
      throw new Error(`the fast path's cache run failed (exit ${run.code}): ${run.stderr}`);
    }
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs node with `args`; resolves to its exit code and output. */
function runNode(args, { env }) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { env, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') reject(error);
      else resolve({ code: error ? error.code : 0, stdout, stderr });
    });
  });
}
