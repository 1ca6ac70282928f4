/**
 * A configured key is never printed: a hostile service on 127.0.0.1 that echoes the API key inside
 * data (a system name) gets `***` on every stream, in a table, piped and under `--json`.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryIO } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { cleanEnv, makeHome } from '../helpers/cli.js';
import { serviceLikeHandler, startFaultServer } from '../helpers/fault-server.js';

const API_KEY = 'gk_echoed_back_by_a_hostile_service_0815';

describe('a configured key is never printed', () => {
  it('is masked when the service echoes it inside a system name', async () => {
    const base = serviceLikeHandler();
    const fault = await startFaultServer({
      handler: (request) =>
        request.url.split('?')[0].endsWith('/grc/systems')
          ? {
              body: {
                systems: [{ system_name: `leak-${API_KEY}`, system_id: 'sys_1', registered: true, risk_tier: 'high', last_evidence_at: null }],
              },
            }
          : request.url.includes('/grc/evidence')
            ? { status: 400, body: { error: 'validation_error', message: `the key ${API_KEY} is wrong` } }
            : base(request),
    });
    try {
      for (const [args, isTTY] of [
        [['systems'], false],
        [['systems'], true],
        [['systems', '--json'], false],
        [['evidence', 'list'], false],
      ] as const) {
        const home = makeHome();
        const env = cleanEnv(home, { SERVICE_BASE_URL: fault.url, SERVICE_API_KEY: API_KEY });
        const io = createMemoryIO({ env, isTTY, columns: 200, noColor: true });
        await main([...args], { io, env, cwd: home });
        const all = io.stdoutText() + io.stderrText();
        expect(all, args.join(' ')).not.toContain(API_KEY);
        expect(all, args.join(' ')).toContain('***');
      }
    } finally {
      await fault.close();
    }
  });
});
