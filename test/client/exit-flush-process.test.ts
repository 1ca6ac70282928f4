/**
 * The beforeExit hook in a real process: a child buffers attestations and ends without close().
 * The library is bundled from the current source with esbuild (as scripts/build.mjs does), and the
 * built package (dist/lib/index.js) is exercised the same way when it exists.
 */
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { build } from 'esbuild';
import { execa } from 'execa';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { serviceLikeHandler, startFaultServer, type FaultServer } from '../helpers/fault-server.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const child = fileURLToPath(new URL('./fixtures/exit-flush-child.mjs', import.meta.url));
const distLib = join(root, 'dist/lib/index.js');
let bundleDir: string;
let server: FaultServer;

beforeAll(async () => {
  bundleDir = mkdtempSync(join(tmpdir(), 'govctl-lib-'));
  await build({
    entryPoints: [join(root, 'src/client/index.ts')],
    outfile: join(bundleDir, 'index.mjs'),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: 'error',
  });
});

afterAll(() => {
  rmSync(bundleDir, { recursive: true, force: true });
});

beforeEach(async () => {
  server = await startFaultServer({ handler: serviceLikeHandler({ workspaceId: 'ws_child' }) });
});

afterEach(async () => {
  await server.close();
});

function runChild(library: string) {
  return execa(process.execPath, [child], {
    env: { GOVCTL_LIB: pathToFileURL(library).href, SERVICE_BASE_URL: server.url, NODE_OPTIONS: '' },
    extendEnv: false,
    reject: false,
    timeout: 20_000,
  });
}

const batchBodies = () =>
  server.requests.filter((request) => request.url.endsWith('/attestations/batch')).map((request) => JSON.parse(request.body) as { records: unknown[] });

const libraries: [string, () => string, () => string | undefined][] = [
  ['the library bundled from source', () => join(bundleDir, 'index.mjs'), () => undefined],
  ['the built package (dist/lib/index.js)', () => distLib, () => (existsSync(distLib) ? undefined : 'dist/lib/index.js is missing: run `npm run build` first')],
];

describe.each(libraries)('a process that ends without close(), using %s', (_name, library, skipReason) => {
  it('delivers the buffered attestations from its beforeExit hook', async (context) => {
    const reason = skipReason();
    if (reason) context.skip(reason);
    const result = await runChild(library());
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('buffered 3');
    expect(result.stderr).toBe('');
    expect(batchBodies().map((body) => body.records.length)).toEqual([3]);
  });

  it('reports on stderr how many attestations were lost, and why, when delivery fails', async (context) => {
    const reason = skipReason();
    if (reason) context.skip(reason);
    server.setHandler(() => ({ status: 503, body: { error: 'server_error', message: 'maintenance window' } }));
    const result = await runChild(library());
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain('GovernanceClientWarning');
    expect(result.stderr).toMatch(/at exit: 3 buffered attestations were not delivered and are lost: .*503.*maintenance window/);
    expect(result.stderr).not.toContain('gk_child_process_0001');
    // Sent twice: a keyed batch is retried once after a 5xx (retry.ts rule 4).
    expect(server.requests.filter((request) => request.url.endsWith('/attestations/batch'))).toHaveLength(2);
  });
});
