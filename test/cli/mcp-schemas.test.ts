/**
 * The MCP record tools' input schemas say what validation refuses, so that an agent checking its
 * arguments against the schema is not surprised by the service: a required string or list may not
 * be empty. And their errors say each problem once. In-process, from the same catalogue the tools
 * are made of, on the embedded store.
 */
import { describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CATALOGUE } from '../../src/core/index.js';
import { createFactory } from '../../src/cli/factory.js';
import { createMemoryIO } from '../../src/cli/io.js';
import { recordToolSchema } from '../../src/cli/mcp/schemas.js';
import { createMcpServer } from '../../src/cli/mcp/server.js';
import { makeHome } from '../helpers/cli.js';

const addFormats = addFormatsModule.default;

describe('record tool schemas', () => {
  it('refuse an empty required string or list, as validation does, and accept the example', () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(ajv);
    let checked = 0;
    for (const spec of CATALOGUE.values()) {
      const schema = recordToolSchema(spec).schema as { properties: Record<string, { type?: string; enum?: unknown[] }>; required: string[]; examples: Record<string, unknown>[] };
      const validate = ajv.compile(schema);
      const example = schema.examples[0]!;
      expect(validate(example), `${spec.type}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      for (const name of schema.required) {
        const property = schema.properties[name]!;
        if (property.enum) continue;
        const empty = property.type === 'string' ? '' : property.type === 'array' ? [] : undefined;
        if (empty === undefined) continue;
        expect(validate({ ...example, [name]: empty }), `${spec.type}.${name} = ${JSON.stringify(empty)}`).toBe(false);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(20);
  });
});

describe('record tool errors', () => {
  it('say a problem two members share once (change_event without a system: system_name, not twice)', async () => {
    const home = makeHome();
    const env = { HOME: home, XDG_CONFIG_HOME: `${home}/config`, XDG_DATA_HOME: `${home}/data`, GOVCTL_BASE_URL: 'local' };
    const deps = createFactory({ io: createMemoryIO(), env, cwd: home, globals: () => ({}), signal: new AbortController().signal });
    const { server } = createMcpServer(deps);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'govctl-test', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      const result = (await client.callTool({ name: 'record_change_event', arguments: { type: 'deployment', by: 'a@example.com', description: 'x', environment: 'production' } })) as {
        isError?: boolean;
        structuredContent?: { message?: string };
      };
      expect(result.isError).toBe(true);
      expect(result.structuredContent?.message).toBe('the change_event record is invalid: system_name is required');
    } finally {
      await client.close();
    }
  });
});
