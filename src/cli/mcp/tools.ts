/**
 * The tools of `govctl mcp`: what the command line does for an agent, on the same client library
 * and settings (the factory). One tool per record type, its schema generated from the catalogue
 * (schemas.ts). Tools throw the CLI's typed errors; server.ts turns every error into a tool error.
 * Every write returns what was stored: ids, mapped controls, the signature state, and every further
 * member the service returns (its `ledger_index`, the record's leaf in the transparency log, which
 * `ledger_prove` then proves; ledger-tools.ts).
 */
import {
  CATALOGUE,
  CLIENT_SIG_ALGO,
  FRAMEWORKS,
  MAX_NAME_LENGTH,
  RECORD_TYPES,
  RISK_TIERS,
  buildAttestation,
  buildRecord,
  sha256Hex,
  signClientSig,
  signWitness,
  validateAttestation,
  type RecordTypeSpec,
  type ValidationIssue,
} from '../../core/index.js';
import { NotFoundError } from '../../client/errors.js';
import type { EvidenceQuery } from '../../client/wire-types.js';
import { DataError, UsageError } from '../errors.js';
import type { Factory } from '../factory.js';
import { displayPath, LOCAL_BASE_URL } from '../settings.js';
import { displayUrl } from '../terminal-text.js';
import { applyFailOn, checkGatesReply, FAIL_ON, gatesVerdict, type FailOn } from '../gate-verdict.js';
import { verifyOne } from '../evidence/verify.js';
import { createLedgerTools } from './ledger-tools.js';
import {
  ART5_CONFIRMATION_ARGUMENT,
  DATE_TIME_SCHEMA,
  DRY_RUN_ARGUMENT,
  SYSTEM_ARGUMENT,
  argumentForPath,
  readRecordArguments,
  recordToolSchema,
  type JsonSchema,
} from './schemas.js';

/** MCP's tool annotations (hints to the host, not guarantees). */
export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** One tool: what `tools/list` shows, and what a call runs (with arguments its schema accepted). */
export interface Tool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  annotations: ToolAnnotations;
  run(args: Record<string, unknown>, deps: Factory): Promise<Record<string, unknown>>;
}

export const READ: Omit<ToolAnnotations, 'title'> = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const WRITE: Omit<ToolAnnotations, 'title'> = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

const NO_ARGUMENTS: JsonSchema = { type: 'object', properties: {}, additionalProperties: false };

function optionalString(args: Record<string, unknown>, name: string): string | undefined {
  const value = args[name];
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/**
 * One line listing every issue, each named by its argument; an issue two members share (the
 * top-level system_name and change_event's payload.system, both from `system_name`) is said once.
 */
function describeArgumentIssues(what: string, issues: readonly ValidationIssue[], name: (path: string) => string): string {
  return `${what} is invalid: ${[...new Set(issues.map((found) => `${name(found.path)} ${found.message}`))].join('; ')}`;
}

/** The tool that records evidence of one record type. */
function recordTool(spec: RecordTypeSpec): Tool {
  const { bindings, schema } = recordToolSchema(spec);
  const art5 = spec.fields.some((field) => field.wire === 'art5_self_assessment');
  const description =
    `Record a ${spec.title} (${spec.type}): ${spec.summary}. ` +
    'Validates the record locally, signs it when a signing key is configured, and stores it; with dry_run: true it only shows the controls it would earn. ' +
    'Returns what was stored: record_id, mapped_controls, whether it was signed (client_sig) and its ledger_index (its leaf in the transparency log; prove it with ledger_prove).' +
    (art5 ? ' art5_self_assessment must be confirmed by a human: ask the person responsible and name them in art5_confirmed_by; never assume it.' : '');
  return {
    name: `record_${spec.type}`,
    description,
    inputSchema: schema,
    annotations: { title: `Record: ${spec.title}`, ...WRITE },
    async run(args, deps) {
      const settings = await deps.settings();
      const systemName = optionalString(args, SYSTEM_ARGUMENT) ?? settings.systemName;
      const confirmedBy = art5 ? optionalString(args, ART5_CONFIRMATION_ARGUMENT) : undefined;
      if (art5 && confirmedBy === undefined) {
        throw new UsageError(`${ART5_CONFIRMATION_ARGUMENT} is required: name the human who confirmed art5_self_assessment`, {
          field: ART5_CONFIRMATION_ARGUMENT,
          hint: 'ask the person responsible for the system; an agent must not certify Art 5 on its own',
        });
      }
      const values = readRecordArguments(bindings, args, systemName);
      const built = buildRecord(spec.type, { payload: values.payload, top: values.top, systemName, overrides: values.overrides }, deps.clock);
      if (!built.ok) {
        const name = (path: string) => argumentForPath(path, bindings);
        throw new DataError(describeArgumentIssues(`the ${spec.type} record`, built.issues, name), {
          code: 'validation_error',
          field: name(built.issues[0].path),
          hint: `fix the arguments (see the input schema of record_${spec.type}) and call again`,
        });
      }
      const record = built.record;
      const key = await deps.signingKey();
      if (key) {
        record.client_sig = signClientSig(record, await deps.workspaceId(), key);
        record.client_sig_algo = CLIENT_SIG_ALGO;
      }
      const dryRun = args[DRY_RUN_ARGUMENT] === true;
      const api = await deps.api();
      const result = await api.postEvidence(record, { dryRun });
      const { client_sig: _signature, ...sent } = record;
      return {
        ...result,
        stored: !dryRun,
        dry_run: dryRun,
        signature: { client_sig: key !== undefined, ...(key ? { client_sig_algo: CLIENT_SIG_ALGO } : {}) },
        ...(confirmedBy !== undefined ? { art5_confirmed_by: confirmedBy } : {}),
        record: sent,
      };
    },
  };
}

const whoami: Tool = {
  name: 'whoami',
  description:
    'Show whose API key govctl uses (user, workspace, organisation) and where it sends records: the service URL or the local store, ' +
    'the configured system, and whether a signing key is configured (never the key itself). Call it first.',
  inputSchema: NO_ARGUMENTS,
  annotations: { title: 'Who am I', ...READ },
  async run(_args, deps) {
    const settings = await deps.settings();
    const api = await deps.api();
    const me = await api.me();
    const baseUrl = settings.baseUrl?.trim();
    const local = !baseUrl || baseUrl === LOCAL_BASE_URL;
    return {
      ...me,
      // Never the base URL's userinfo or query (docs/security.md): a token there is a secret too.
      connection: local ? { kind: 'local_store', data_dir: displayPath(settings.dataDir) } : { kind: 'service', base_url: displayUrl(baseUrl) },
      system_name: settings.systemName ?? null,
      agent_name: settings.agentName ?? settings.systemName ?? null,
      signing_key_configured: settings.hasSigningKey,
    };
  },
};

const listEvidence: Tool = {
  name: 'list_evidence',
  description: 'List stored evidence records, newest first: record_id, type, system, when, mapped controls, whether signed. Page on with next_cursor.',
  inputSchema: {
    type: 'object',
    properties: {
      system_name: { type: 'string', minLength: 1, description: 'only this system (default: every system)' },
      record_type: { type: 'string', enum: [...RECORD_TYPES], description: 'only this record type' },
      days: { type: 'integer', minimum: 1, description: 'look back this many days (service default 90)' },
      limit: { type: 'integer', minimum: 1, maximum: 200, description: 'records per page (service default 50)' },
      cursor: { type: 'string', description: 'next_cursor of the previous page' },
    },
    additionalProperties: false,
    examples: [{ system_name: 'loan-scorer', days: 30 }],
  },
  annotations: { title: 'List evidence', ...READ },
  async run(args, deps) {
    const query: EvidenceQuery = {};
    if (typeof args.system_name === 'string') query.system_name = args.system_name;
    if (typeof args.record_type === 'string') query.record_type = args.record_type;
    if (typeof args.days === 'number') query.days = args.days;
    if (typeof args.limit === 'number') query.limit = args.limit;
    if (typeof args.cursor === 'string') query.cursor = args.cursor;
    return { ...(await (await deps.api()).listEvidence(query)) };
  },
};

const getEvidence: Tool = {
  name: 'get_evidence',
  description:
    'Fetch one stored evidence record whole (payload and signature as stored). With a signing key configured, its client_sig is checked again: signature is valid, invalid or unsigned.',
  inputSchema: {
    type: 'object',
    properties: { record_id: { type: 'string', minLength: 1, description: 'the record id (from record_* or list_evidence)' } },
    required: ['record_id'],
    additionalProperties: false,
    examples: [{ record_id: '0b8c5f0e-0000-4000-8000-000000000000' }],
  },
  annotations: { title: 'Get one evidence record', ...READ },
  async run(args, deps) {
    const api = await deps.api();
    const recordId = String(args.record_id);
    let stored;
    try {
      stored = await api.getEvidence(recordId);
    } catch (error) {
      // The client's hint for a 404 is about the workspace; here it is the id that is unknown.
      if (error instanceof NotFoundError)
        throw new DataError(`no stored record has the id ${recordId} in this workspace`, {
          code: 'not_found',
          field: 'record_id',
          hint: 'list_evidence gives the ids of stored records',
        });
      throw error;
    }
    const key = await deps.signingKey();
    const signature = key ? verifyOne(stored, 0, await deps.workspaceId(), key).status : 'not checked (no signing key configured)';
    return { record: stored, signature };
  },
};

const HASH_SCHEMA = (side: string): JsonSchema => ({
  type: 'string',
  pattern: '^[0-9a-fA-F]{64}$',
  description: `the ${side}'s SHA-256, 64 hex characters (or give ${side}_text)`,
});
const TEXT_SCHEMA = (side: string): JsonSchema => ({
  type: 'string',
  description: `the ${side} as text: hashed here with SHA-256 (UTF-8) and only the hash is sent; the text never leaves (or give ${side}_hash)`,
});

/** One side of an attestation: its hash, given or computed from text here; exactly one of the two. */
function sideHash(args: Record<string, unknown>, side: 'input' | 'output'): string {
  const hash = args[`${side}_hash`];
  const text = args[`${side}_text`];
  if (hash !== undefined && text !== undefined) throw new UsageError(`give ${side}_hash or ${side}_text, not both`, { field: `${side}_hash` });
  if (typeof hash === 'string') return hash.trim().toLowerCase();
  if (typeof text === 'string') return sha256Hex(text);
  throw new UsageError(`the ${side} is missing: give ${side}_text (hashed here) or ${side}_hash`, { field: `${side}_text` });
}

const ATTESTATION_ARGUMENT: Readonly<Record<string, string>> = { 'authorised_by.session_id': 'authorised_by.session_id', executed_at: 'executed_at' };

const pushAttestation: Tool = {
  name: 'push_attestation',
  description:
    'Attest that a tool or agent step ran: its input and output are recorded as SHA-256 hashes (give the hashes, or the text, which is hashed here and never sent). ' +
    'Signed with the configured signing key (witness_sig) when there is one. Returns the attestation_id, trust tier, whether the signature was attached and verified, and its ledger_index (prove it with ledger_prove).',
  inputSchema: {
    type: 'object',
    properties: {
      tool_name: { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH, description: 'the tool or agent step that ran' },
      input_text: TEXT_SCHEMA('input'),
      input_hash: HASH_SCHEMA('input'),
      output_text: TEXT_SCHEMA('output'),
      output_hash: HASH_SCHEMA('output'),
      model_id: { type: 'string', description: 'the model that ran' },
      executed_at: { ...DATE_TIME_SCHEMA, description: 'when it ran, ISO 8601 (default: now)' },
      authorised_by: {
        type: 'object',
        properties: {
          identity: { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH, description: 'who authorised the run (e-mail)' },
          role: { type: 'string' },
          session_id: { type: 'string' },
        },
        required: ['identity'],
        additionalProperties: false,
        description: 'who authorised the run (default: authorisedBy from the configuration)',
      },
      system_name: { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH, description: 'the AI system (default: the configured system)' },
      agent_name: { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH, description: 'the agent (default: the configured agent, else the system)' },
    },
    required: ['tool_name'],
    additionalProperties: false,
    examples: [{ tool_name: 'summarise', input_text: 'the prompt', output_text: 'the answer', model_id: 'gpt-4o', system_name: 'loan-scorer' }],
  },
  annotations: { title: 'Push an attestation', ...WRITE },
  async run(args, deps) {
    const settings = await deps.settings();
    const systemName = optionalString(args, 'system_name') ?? settings.systemName;
    if (!systemName) throw new UsageError('the system is missing: give system_name or configure SERVICE_SYSTEM_NAME', { field: 'system_name' });
    const inputHash = sideHash(args, 'input');
    const outputHash = sideHash(args, 'output');
    const by = args.authorised_by as { identity: string; role?: string; session_id?: string } | undefined;
    const authorisedBy = by
      ? { identity: by.identity, ...(by.role !== undefined ? { role: by.role } : {}), ...(by.session_id !== undefined ? { sessionId: by.session_id } : {}) }
      : settings.authorisedBy;
    const record = buildAttestation(
      {
        systemName,
        agentName: optionalString(args, 'agent_name') ?? settings.agentName,
        toolName: String(args.tool_name),
        inputHash,
        outputHash,
        executedAt: optionalString(args, 'executed_at'),
        modelId: optionalString(args, 'model_id'),
        authorisedBy,
      },
      deps.clock,
    );
    const issues = validateAttestation(record);
    if (issues.length > 0) {
      const name = (path: string) => ATTESTATION_ARGUMENT[path] ?? path;
      throw new DataError(describeArgumentIssues('the attestation', issues, name), { code: 'validation_error', field: name(issues[0].path) });
    }
    const key = await deps.signingKey();
    if (key) Object.assign(record, signWitness(record as unknown as Record<string, unknown>, await deps.workspaceId(), key));
    const result = await (await deps.api()).postAttestation(record);
    const { witness_sig: _signature, ...sent } = record;
    return {
      ...result,
      signature: { witness_sig: key !== undefined, ...(record.verifying_key_hex ? { verifying_key_hex: record.verifying_key_hex } : {}) },
      record: sent,
    };
  },
};

const getPosture: Tool = {
  name: 'get_posture',
  description:
    "The workspace's compliance posture: overall percent, the score of each framework (EU AI Act, ISO 42001, SOC 2, ISO 27001, NIST AI RMF), failing gates, and attestations missing in the last 24 hours.",
  inputSchema: NO_ARGUMENTS,
  annotations: { title: 'Posture brief', ...READ },
  async run(_args, deps) {
    return { ...(await (await deps.api()).postureBrief()) };
  },
};

const listSystems: Tool = {
  name: 'list_systems',
  description: 'The AI systems of the workspace: whether each is registered (has an ai_risk_assessment), its risk tier and when evidence last arrived.',
  inputSchema: {
    type: 'object',
    properties: { name: { type: 'string', minLength: 1, description: 'only the system of this name' } },
    additionalProperties: false,
  },
  annotations: { title: 'List systems', ...READ },
  async run(args, deps) {
    return { ...(await (await deps.api()).systems(optionalString(args, 'name'))) };
  },
};

const checkGates: Tool = {
  name: 'check_gates',
  description:
    'Check the release gates, as `govctl gates check` does. verdict is its exit code: 0 every gate passes, 1 a non-blocking (advisory) gate fails, 2 a blocking gate fails. ' +
    "A failing gate is a result, not an error: read each gate's reason for the evidence that would close it.",
  inputSchema: {
    type: 'object',
    properties: {
      fail_on: {
        type: 'string',
        enum: [...FAIL_ON],
        default: 'soft',
        description: "soft: the gates' verdict; hard: advisory failures pass (1 → 0); never: always 0 (report only)",
      },
    },
    additionalProperties: false,
  },
  annotations: { title: 'Check gates', ...READ },
  async run(args, deps) {
    const body = await (await deps.api()).gatesCheck();
    const gates = checkGatesReply(body);
    const gatesVerdictCode = gatesVerdict(gates);
    const failOn = (args.fail_on as FailOn | undefined) ?? 'soft';
    const verdict = applyFailOn(gatesVerdictCode, failOn);
    const meaning = verdict === 0 ? 'pass' : verdict === 1 ? 'soft fail: a non-blocking gate fails' : 'hard fail: a blocking gate fails';
    return { verdict, meaning, fail_on: failOn, gates_verdict: gatesVerdictCode, ...body };
  },
};

const deriveControls: Tool = {
  name: 'derive_controls',
  description: 'Which record types (and the controls they earn) a system should record, from a description of it and its EU AI Act risk tier.',
  inputSchema: {
    type: 'object',
    properties: {
      description: { type: 'string', minLength: 1, description: 'what the system does, how it is built and deployed' },
      risk_tier: { type: 'string', enum: [...RISK_TIERS], description: 'the EU AI Act risk tier' },
    },
    required: ['description', 'risk_tier'],
    additionalProperties: false,
    examples: [{ description: 'Scores consumer loan applications using the OpenAI API; deployed via CI', risk_tier: 'high' }],
  },
  annotations: { title: 'Derive controls', ...READ },
  async run(args, deps) {
    return { ...(await (await deps.api()).deriveControls({ description: String(args.description), risk_tier: String(args.risk_tier) })) };
  },
};

const listGatePolicies: Tool = {
  name: 'list_gate_policies',
  description: `The gate policy in effect for each framework (${FRAMEWORKS.join(', ')}): mode (required = blocking, advisory), threshold, current score, status, and whether it is the default or the workspace's own.`,
  inputSchema: NO_ARGUMENTS,
  annotations: { title: 'Gate policies', ...READ },
  async run(_args, deps) {
    return { ...(await (await deps.api()).gatePolicies()) };
  },
};

/** Every tool, in the order `tools/list` shows them. */
export function createTools(): Tool[] {
  return [
    whoami,
    ...[...CATALOGUE.values()].map(recordTool),
    listEvidence,
    getEvidence,
    pushAttestation,
    getPosture,
    listSystems,
    checkGates,
    deriveControls,
    listGatePolicies,
    ...createLedgerTools(),
  ];
}
