/**
 * The package's entry points as a CommonJS user reaches them: `require('govctl')` in a process, by
 * the package's own name (Node resolves a package's name from inside it through its "exports", as it
 * does for an installed copy). The built files (dist/lib) are what the global setup builds.
 */
import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Runs `script` as CommonJS in a new node beside the package (its own `govctl`); its stdout parsed as JSON, stderr empty. */
async function runCommonJs(script: string): Promise<unknown> {
  const run = await execa(process.execPath, ['--input-type=commonjs', '-e', script], { cwd: root, reject: false, timeout: 20_000, env: { NODE_OPTIONS: '' } });
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout);
}

describe('package exports', () => {
  it('require() loads govctl, govctl/core and govctl/server (Node ≥ 20.19 requires ES modules), the same classes import gives', async () => {
    const script = [
      "const client = require('govctl'); const core = require('govctl/core'); const server = require('govctl/server');",
      'import("govctl").then((esm) => console.log(JSON.stringify({',
      '  client: typeof client.GovernanceClient, core: typeof core.canonicalize, server: typeof server.startServer,',
      '  sameClass: esm.GovernanceClient === client.GovernanceClient && esm.SigningKey === core.SigningKey,',
      '})));',
    ].join('\n');
    expect(await runCommonJs(script)).toEqual({ client: 'function', core: 'function', server: 'function', sameClass: true });
  });

  it("keeps the classes' own names in the build, so that an inspected error reads ValidationError, not _ValidationError", async () => {
    const script = [
      'const { inspect } = require("node:util");',
      'import("govctl").then(({ ValidationError, NetworkError, GovernanceClient }) => {',
      '  const error = new ValidationError("validation_error", "payload.risk_level must be one of: high");',
      '  console.log(JSON.stringify({ error: error.constructor.name, network: NetworkError.name, client: GovernanceClient.name, inspected: inspect(error).split(":")[0] }));',
      '});',
    ].join('\n');
    expect(await runCommonJs(script)).toEqual({ error: 'ValidationError', network: 'NetworkError', client: 'GovernanceClient', inspected: 'ValidationError' });
  });
});
