/**
 * The MCP record tools' input schemas say what validation refuses, so that an agent checking its
 * arguments against the schema is not surprised by the service: a required string or list may not
 * be empty, a name may not be longer, and a date-time may not take a form the service refuses. And
 * their errors say each problem once. In-process, from the same catalogue the tools
 * are made of, on the embedded store.
 */
import { describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { CATALOGUE, isDateTime, MAX_NAME_LENGTH, validateAttestation } from '../../src/core/index.js';
import { recordToolSchema } from '../../src/cli/mcp/schemas.js';
import { connectMcpInProcess } from '../helpers/mcp.js';

const addFormats = addFormatsModule.default;

describe('record tool schemas', () => {
  it('refuse an empty required string or list, as validation does, and accept the example', () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(ajv);
    let checked = 0;
    for (const spec of CATALOGUE.values()) {
      const schema = recordToolSchema(spec).schema as {
        properties: Record<string, { type?: string; enum?: unknown[] }>;
        required: string[];
        examples: Record<string, unknown>[];
      };
      const validate = ajv.compile(schema);
      const example = schema.examples[0];
      expect(validate(example), `${spec.type}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      for (const name of schema.required) {
        const property = schema.properties[name];
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

describe('name arguments', () => {
  it('take at most as many characters as validation does (MAX_NAME_LENGTH), in the record tools and push_attestation', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const { client, close } = await connectMcpInProcess({ GOVCTL_BASE_URL: 'local' });
    try {
      const { tools } = await client.listTools();
      /** Whether the tool's example with one name argument of each length passes its schema. */
      const names = (tool: string, args: Record<string, (name: string) => unknown>) => {
        const schema = tools.find((t) => t.name === tool)!.inputSchema;
        const validate = ajv.compile(schema);
        const example = (schema as unknown as { examples: Record<string, unknown>[] }).examples[0];
        return Object.entries(args).map(([name, value]) => {
          const at = (length: number) => validate({ ...example, [name]: value('a'.repeat(length)) });
          return { name: `${tool}.${name}`, fits: at(MAX_NAME_LENGTH), over: at(MAX_NAME_LENGTH + 1) };
        });
      };
      const text = (name: string) => name;
      const attestation = names('push_attestation', { tool_name: text, system_name: text, agent_name: text, authorised_by: (identity) => ({ identity }) });
      const records = [...CATALOGUE.keys()].flatMap((type) => names(`record_${type}`, { system_name: text }));
      expect(records.length).toBe(CATALOGUE.size);
      for (const { name, fits, over } of [...attestation, ...records]) expect({ name, fits, over }).toEqual({ name, fits: true, over: false });
    } finally {
      await close();
    }
    // and the core refuses the same length
    expect(validateAttestation({ system_name: 'a'.repeat(MAX_NAME_LENGTH + 1) }).some((issue) => issue.path === 'system_name' && issue.code === 'range')).toBe(
      true,
    );
  });
});

describe('date-time arguments', () => {
  /** Taken by the service, and not: each said again by the schemas (with a format checker). */
  const TAKEN = ['2026-01-31T09:30:00Z', '2026-01-31T09:30:00.123456789+02:00', '2026-01-31T23:59:59-0500', '2024-02-29T00:00:00Z'];
  const REFUSED = [
    '2026-01-31t09:30:00Z', // lower-case t: RFC 3339 allows it
    '2026-01-31T09:30:00z', // lower-case z: idem
    '2026-01-31 09:30:00Z', // a space for the T: idem
    '2016-12-31T23:59:60Z', // a leap second: idem
    '2026-01-31T09:30:00+02', // an offset without minutes
    '2026-01-31T09:30:00.1234567890Z', // ten fraction digits
    '2026-01-31T24:00:00Z',
    '2026-02-30T09:30:00Z',
    '2026-01-31T09:30:00', // no zone
    '2026-01-31',
  ];

  it('are taken by the schemas only in forms the service takes (format date-time and the pattern validation uses)', async () => {
    for (const value of TAKEN) expect(isDateTime(value), value).toBe(true);
    for (const value of REFUSED) expect(isDateTime(value), value).toBe(false);
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const { client, close } = await connectMcpInProcess({ GOVCTL_BASE_URL: 'local' });
    try {
      const { tools } = await client.listTools();
      let fields = 0;
      for (const tool of tools) {
        const schema = tool.inputSchema as unknown as { properties: Record<string, { format?: string }>; examples?: Record<string, unknown>[] };
        const example = schema.examples?.[0];
        if (example === undefined) continue;
        const validate = ajv.compile(schema);
        for (const [name, property] of Object.entries(schema.properties)) {
          if (property.format !== 'date-time') continue;
          fields += 1;
          for (const value of TAKEN) expect(validate({ ...example, [name]: value }), `${tool.name}.${name} = ${value}`).toBe(true);
          for (const value of REFUSED) expect(validate({ ...example, [name]: value }), `${tool.name}.${name} = ${value}`).toBe(false);
        }
      }
      // push_attestation's executed_at and each record tool's occurred_at at least
      expect(fields).toBeGreaterThan(CATALOGUE.size);
    } finally {
      await close();
    }
  });
});

describe('record tool errors', () => {
  it('say a problem two members share once (change_event without a system: system_name, not twice)', async () => {
    const { client, close } = await connectMcpInProcess({ GOVCTL_BASE_URL: 'local' });
    try {
      const result = (await client.callTool({
        name: 'record_change_event',
        arguments: { type: 'deployment', by: 'a@example.com', description: 'x', environment: 'production' },
      })) as {
        isError?: boolean;
        structuredContent?: { message?: string };
      };
      expect(result.isError).toBe(true);
      expect(result.structuredContent?.message).toBe('the change_event record is invalid: system_name is required');
    } finally {
      await close();
    }
  });
});
