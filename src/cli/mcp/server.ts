/**
 * The MCP server of `govctl mcp`, on the official SDK's low-level `Server` (the input schemas are
 * plain JSON Schema generated from the catalogue, so no zod layer): tools (tools.ts), resources and
 * prompts (guides.ts). Every failure of a call becomes a tool result with `isError: true` that says
 * what to do, never a protocol error or a crash; every text that leaves is scrubbed of the API key
 * and the signing key (defence in depth: no code path puts them there).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ENVIRONMENT } from '../environment.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolRequest,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { redact } from '../../client/errors.js';
import { CLIENT_VERSION } from '../../client/version.js';
import { stringifyJson } from '../../core/canonical-json.js';
import { describeError, oneLine, UsageError } from '../errors.js';
import { redactUrls, terminalText } from '../terminal-text.js';
import type { Factory } from '../factory.js';
import { getPrompt, listPrompts, listResources, readResource } from './guides.js';
import { createTools, type Tool } from './tools.js';
import type { JsonSchema } from './schemas.js';

/** What the server tells every client at initialisation. */
const INSTRUCTIONS =
  'govctl records AI-governance evidence and attestations and checks release gates. Start with whoami. ' +
  'Run a record_* tool with dry_run: true first to see the controls a record earns. ' +
  'Never answer art5_self_assessment yourself: a human must confirm it (art5_confirmed_by). ' +
  'check_gates gives the verdict 0 (pass), 1 (soft fail) or 2 (hard fail); each failing gate says what evidence closes it. ' +
  'ledger_prove proves that a stored record (by its id) is in the signed transparency log exactly as the service returns it.';

/** The secrets of a run: whatever is set of the API key and the signing key, as text. */
export async function secretsOf(deps: Factory): Promise<string[]> {
  const secrets = ['apiKey', 'signingKey'].flatMap((setting) => {
    const entry = ENVIRONMENT.find((variable) => variable.setting === setting)!;
    return [deps.env[entry.name], entry.alias === undefined ? undefined : deps.env[entry.alias]];
  });
  try {
    secrets.push((await deps.settings()).apiKey);
  } catch {
    // settings that do not load hold no key to hide; the tools report why they do not load
  }
  return secrets.filter((secret): secret is string => typeof secret === 'string' && secret.trim().length >= 4).map((secret) => secret.trim());
}

/** A checked tool: its compiled argument validator. */
interface ReadyTool {
  tool: Tool;
  validate: (args: unknown) => { valid: boolean; errorMessage?: string };
  names: Set<string>;
}

/** The tools with their argument validators compiled, once per process (compiling is the costly part). */
export type PreparedTools = ReadonlyMap<string, ReadyTool>;

export function prepareTools(tools: readonly Tool[] = createTools()): PreparedTools {
  const validator = new AjvJsonSchemaValidator();
  return new Map(
    tools.map((tool) => [
      tool.name,
      {
        tool,
        validate: validator.getValidator(tool.inputSchema as Parameters<typeof validator.getValidator>[0]),
        names: new Set(Object.keys((tool.inputSchema.properties as Record<string, unknown> | undefined) ?? {})),
      },
    ]),
  );
}

/**
 * Checks a call's arguments against the tool's schema, naming the argument at fault. Unknown
 * arguments are found here (the validator's message would not name them).
 * @throws UsageError naming the first argument at fault
 */
function checkArguments(ready: ReadyTool, args: Record<string, unknown>): void {
  const unknown = Object.keys(args).filter((name) => !ready.names.has(name));
  if (unknown.length > 0) {
    throw new UsageError(`unknown argument${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} of ${ready.tool.name}`, {
      field: unknown[0],
      hint: `the arguments are: ${[...ready.names].join(', ') || 'none'}`,
    });
  }
  const result = ready.validate(args);
  if (result.valid) return;
  // ajv names an argument as `data/<name>` and a missing one as `data must have required property '<name>'`;
  // its enum message does not list the values, so they are added from the schema.
  const properties = (ready.tool.inputSchema.properties as Record<string, JsonSchema> | undefined) ?? {};
  const problems = (result.errorMessage ?? 'data is invalid').split(/, (?=data\b)/).map((problem) => {
    const missing = /^data must have required property '([^']+)'$/.exec(problem);
    if (missing) return { field: missing[1], text: `${missing[1]} is required` };
    const at = /^data\/([^/\s]+)(\S*) (.*)$/.exec(problem);
    if (!at) return { field: undefined, text: problem.replace(/^data\b/, 'arguments') };
    const [, name, rest, what] = at;
    const property = properties[name] ?? {};
    const values = (property.enum ?? (property.items as JsonSchema | undefined)?.enum) as unknown[] | undefined;
    const text = /equal to one of the allowed values/.test(what) && values ? `must be one of: ${values.join(', ')}` : what;
    return { field: name, text: `${name}${rest.replace(/\/(\d+)/g, '[$1]').replace(/\//g, '.')} ${text}` };
  });
  const field = problems.find((problem) => problem.field !== undefined)?.field;
  // The same rule may be broken twice over (a required member and a conditional that requires it too): said once.
  throw new UsageError(`invalid arguments of ${ready.tool.name}: ${[...new Set(problems.map((problem) => problem.text))].join('; ')}`, {
    ...(field !== undefined ? { field } : {}),
    hint: `see the input schema of ${ready.tool.name} and call it again`,
  });
}

/** A tool's value as its result: pretty JSON text, and the same as structured content. */
function toolResult(value: Record<string, unknown>, secrets: readonly string[]): CallToolResult {
  const text = redact(stringifyJson(value, 2), secrets);
  return { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) as Record<string, unknown> };
}

/**
 * A failure's sentence and hint as they may leave: never the keys, a URL never with its userinfo
 * or query, and the service's own text (its `message`) with control characters and bidi controls
 * as visible escapes, as the CLI shows errors (docs/security.md): hosts show tool errors, often on
 * a terminal, and an ESC sequence from the service must not act there.
 */
function failureText(error: unknown, secrets: readonly string[]): { code: string; field?: string; message: string; hint?: string } {
  const described = describeError(error);
  const message = terminalText(redactUrls(redact(oneLine(described.message), secrets)));
  const hint = described.hint !== undefined ? terminalText(redactUrls(redact(oneLine(described.hint), secrets))) : undefined;
  return { code: described.code, ...(described.field !== undefined ? { field: described.field } : {}), message, ...(hint !== undefined ? { hint } : {}) };
}

/** Any failure as a tool error: what failed and what to do, never the key. */
function toolError(error: unknown, secrets: readonly string[]): CallToolResult {
  const described = failureText(error, secrets);
  const { message, hint } = described;
  return {
    isError: true,
    content: [{ type: 'text', text: `${message}${hint ? `; ${hint}` : ''}` }],
    structuredContent: {
      error: described.code,
      message,
      ...(described.field !== undefined ? { field: described.field } : {}),
      ...(hint !== undefined ? { hint } : {}),
    },
  };
}

/** An MCP server, and a way to wait for the requests it is still answering. */
export interface McpServer {
  server: Server;
  /** resolves once every request received so far has been answered */
  settled(): Promise<void>;
}

/**
 * The longest wait for a 429's `Retry-After` before the client's one retry. Hosts give up on a
 * call after about a minute (the SDK client's default timeout is 60 s) and the service may ask for
 * up to 60 s: waiting that long ended in the host's timeout, a protocol error, and a write made
 * after the host had given up. Within this wait the call ends as a result or a `rate_limited`
 * tool error that says how long to wait.
 */
export const MCP_RATE_LIMIT_WAIT_MS = 10_000;

/** Builds one MCP server over the run's factory (one per stdio run, one per HTTP request). */
export function createMcpServer(deps: Factory, ready: PreparedTools = prepareTools()): McpServer {
  deps.rateLimitWaitMs = MCP_RATE_LIMIT_WAIT_MS;
  const calls = new AsyncLocalStorage<AbortSignal>();
  deps.currentSignal = () => calls.getStore();
  const tools = [...ready.values()].map((entry) => entry.tool);
  // A host (or a pipe) may close stdin right after its last request: that request is still answered.
  const pending = new Set<Promise<unknown>>();
  const track = <T>(work: Promise<T>): Promise<T> => {
    pending.add(work);
    void work.finally(() => pending.delete(work)).catch(() => undefined);
    return work;
  };
  const server = new Server(
    { name: 'govctl', title: 'govctl: AI-governance evidence', version: CLIENT_VERSION },
    { capabilities: { tools: {}, resources: {}, prompts: {} }, instructions: INSTRUCTIONS },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map((tool) => ({
      name: tool.name,
      title: tool.annotations.title,
      description: tool.description,
      inputSchema: tool.inputSchema as { type: 'object'; [key: string]: unknown },
      annotations: tool.annotations,
    })),
  }));

  // A call the host cancels (notifications/cancelled, or its own timeout) stops its request to the
  // service: the call's signal is the one every request made during it carries (Factory.currentSignal).
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => track(calls.run(extra.signal, () => callTool(request))));

  async function callTool(request: CallToolRequest): Promise<CallToolResult> {
    const secrets = await secretsOf(deps);
    const name = request.params.name;
    const found = ready.get(name);
    let outcome: CallToolResult;
    try {
      if (!found) {
        throw new UsageError(`there is no tool ${name}`, { field: 'name', hint: `the tools are: ${[...ready.keys()].join(', ')}` });
      }
      const args = request.params.arguments ?? {};
      checkArguments(found, args);
      outcome = toolResult(await found.tool.run(args, deps), secrets);
    } catch (error) {
      outcome = toolError(error, secrets);
      if (describeError(error).code === 'internal_error' && error instanceof Error && error.stack) {
        await deps.note(redact(`mcp: ${found ? name : '(unknown tool)'}: ${error.stack}`, secrets)).catch(() => undefined);
      }
    }
    // One line per call on stderr (the host's log); never the arguments: they may hold text that must not leave.
    const status = outcome.isError ? `error ${(outcome.structuredContent as { error: string }).error}` : 'ok';
    // The name is the client's text: only a known one is written to a log that may be a terminal.
    await deps.note(`mcp: ${found ? name : '(unknown tool)'}: ${status}`).catch(() => undefined);
    return outcome;
  }

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: listResources() }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) =>
    track(
      (async () => {
        const secrets = await secretsOf(deps);
        try {
          return await readResource(request.params.uri, deps, secrets);
        } catch (error) {
          if (error instanceof McpError) throw error;
          // A resource read has no tool-error form: the JSON-RPC error carries the same sentence.
          const { message, hint } = failureText(error, secrets);
          throw new McpError(ErrorCode.InternalError, `${message}${hint ? `; ${hint}` : ''}`);
        }
      })(),
    ),
  );
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: listPrompts() }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => getPrompt(request.params.name, request.params.arguments ?? {}));
  return {
    server,
    async settled() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
      // The SDK sends a response after its handler's promise resolves: let that happen first.
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
  };
}
