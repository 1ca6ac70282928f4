/**
 * What `govctl mcp` offers besides tools (docs/mcp.md "Resources and prompts"): two resources an
 * agent reads for context (the posture brief, and the record-type catalogue as a guide to which
 * record_* tool fits), and one prompt that walks a system from registration to passing gates.
 */
import { ErrorCode, McpError, type GetPromptResult, type Prompt, type ReadResourceResult, type Resource } from '@modelcontextprotocol/sdk/types.js';
import { redact } from '../../client/errors.js';
import { CATALOGUE, RISK_TIERS, stringifyJson } from '../../core/index.js';
import type { Factory } from '../factory.js';
import { recordToolSchema } from './schemas.js';

export const POSTURE_URI = 'govctl://posture';
export const RECORD_TYPES_URI = 'govctl://record-types';

export function listResources(): Resource[] {
  return [
    {
      uri: POSTURE_URI,
      name: 'posture',
      title: 'Compliance posture brief',
      description: "The workspace's posture now (as get_posture): overall percent, framework scores, failing gates, unattested runs. Read live on every read.",
      mimeType: 'application/json',
    },
    {
      uri: RECORD_TYPES_URI,
      name: 'record-types',
      title: 'The 11 record types',
      description:
        "Which record_* tool records what: each type's purpose, its required arguments and the controls it serves. Generated from the record-type catalogue.",
      mimeType: 'text/markdown',
    },
  ];
}

/** The catalogue as a guide: one section per record type, its tool and required arguments. */
export function recordTypesGuide(): string {
  const lines = [
    '# Record types',
    '',
    'One `record_<type>` tool per type. Run it with `dry_run: true` first: it shows the controls the record would earn and stores nothing.',
    '',
  ];
  for (const spec of CATALOGUE.values()) {
    const { schema } = recordToolSchema(spec);
    const required = (schema.required as string[]).map((name) => `\`${name}\``).join(', ');
    lines.push(`## ${spec.title}: \`record_${spec.type}\``, '', `${spec.summary}.`, '', `Required: ${required || 'nothing beyond the system'}.`, '');
  }
  return lines.join('\n');
}

export async function readResource(uri: string, deps: Factory, secrets: readonly string[]): Promise<ReadResourceResult> {
  if (uri === RECORD_TYPES_URI) return { contents: [{ uri, mimeType: 'text/markdown', text: recordTypesGuide() }] };
  if (uri !== POSTURE_URI) throw new McpError(ErrorCode.InvalidParams, `there is no resource ${uri}; the resources are ${POSTURE_URI} and ${RECORD_TYPES_URI}`);
  // A failure is the server's to turn into a JSON-RPC error (server.ts), as tool errors are.
  const brief = await (await deps.api()).postureBrief();
  return { contents: [{ uri, mimeType: 'application/json', text: redact(stringifyJson(brief, 2), secrets) }] };
}

export const ONBOARD_PROMPT = 'onboard_system';

export function listPrompts(): Prompt[] {
  return [
    {
      name: ONBOARD_PROMPT,
      title: 'Walk a system from registration to passing gates',
      description:
        'Register an AI system (its risk assessment, confirmed by a human), record the evidence its controls need, and check the gates until they pass.',
      arguments: [
        { name: 'system_name', description: 'the AI system', required: true },
        { name: 'description', description: 'what the system does, how it is built and deployed', required: false },
        { name: 'risk_tier', description: `the EU AI Act risk tier, if known: ${RISK_TIERS.join(', ')}`, required: false },
      ],
    },
  ];
}

export function getPrompt(name: string, args: Record<string, string>): GetPromptResult {
  if (name !== ONBOARD_PROMPT) throw new McpError(ErrorCode.InvalidParams, `there is no prompt ${name}; the prompt is ${ONBOARD_PROMPT}`);
  const system = args.system_name?.trim();
  if (!system) throw new McpError(ErrorCode.InvalidParams, 'the prompt needs system_name');
  const description = args.description?.trim() ? `It is described as: ${args.description.trim()}` : 'Ask me what it does, how it is built and deployed.';
  const tier = args.risk_tier?.trim()
    ? `Its risk tier is ${args.risk_tier.trim()}.`
    : 'Its risk tier is not known yet: propose one, with reasons, and let me decide.';
  const text = [
    `Take the AI system "${system}" from registration to passing release gates with the govctl tools. ${description} ${tier}`,
    '',
    '1. Call whoami: check the workspace, the service and whether records will be signed.',
    `2. Call derive_controls with the description and risk tier: it lists the record types "${system}" needs, by priority.`,
    `3. Register the system with record_ai_risk_assessment (system_name "${system}"), first with dry_run: true. ` +
      'art5_self_assessment must come from me or another human: ask, and give the name of whoever confirmed it as art5_confirmed_by. Never assume it.',
    '4. Record the required record types derive_controls named, each with a dry run first; ask me for facts you do not have rather than inventing them.',
    '5. Call check_gates. verdict 0 means every gate passes; 1 an advisory gate fails; 2 a blocking gate fails. For each failing gate, read its reason: it names the evidence that would close it.',
    "6. Repeat 4 and 5 until the verdict is 0, or tell me what is still missing and who must provide it. list_gate_policies shows each gate's threshold.",
    '7. Summarise what was stored: the record ids, the controls earned, whether each record was signed, and its ledger_index; ledger_prove shows a record is in the signed log as stored.',
  ].join('\n');
  return {
    description: `Onboard ${system}: registration to passing gates`,
    messages: [{ role: 'user', content: { type: 'text', text } }],
  };
}
