import type { RecordTypeSpec } from './types.js';

/** `policy:<slug>:<version>`, slug = lower-case name with whitespace runs as `-` (docs/service.md "Record payloads") */
export function policyResource(name: string, version: string): string {
  return `policy:${name.trim().toLowerCase().replace(/\s+/g, '-')}:${version}`;
}

export const policyAcknowledged: RecordTypeSpec = {
  type: 'policy_acknowledged',
  method: 'policyAcknowledged',
  title: 'Policy acknowledged',
  summary: 'A person acknowledged an AI or security policy (EU AI Act Art 4 literacy)',
  fields: [
    {
      wire: 'decision',
      input: 'decision',
      kind: 'string',
      required: true,
      enum: ['acknowledged'],
      default: 'acknowledged',
      fixed: true,
      example: 'acknowledged',
      description: 'always acknowledged',
    },
    { wire: 'policy_name', input: 'policyName', kind: 'string', required: true, example: 'Acceptable Use of AI', description: 'policy acknowledged' },
    { wire: 'policy_version', input: 'version', kind: 'string', required: true, example: '2.1', description: 'policy version' },
    {
      wire: 'acknowledgment_type',
      input: 'acknowledgmentType',
      kind: 'string',
      required: false,
      enum: ['initial', 'renewal', 'update'],
      default: 'initial',
      example: 'renewal',
      description: 'kind of acknowledgment',
    },
    { wire: 'channel', input: 'channel', kind: 'string', required: false, default: 'in-app', example: 'in-app', description: 'where it was acknowledged' },
    {
      wire: 'policy_url',
      input: 'policyUrl',
      kind: 'string',
      required: false,
      example: 'https://intranet.example.com/policies/ai-use',
      description: 'link to the policy text',
    },
    { wire: 'session_id', input: 'sessionId', kind: 'string', required: false, example: 'sess_7f3a9c', description: 'session in which it was acknowledged' },
  ],
  topInputs: [
    {
      input: 'acknowledgingIdentity',
      flag: 'acknowledging-identity',
      kind: 'string',
      required: true,
      example: 'sam.lee@example.com',
      description: 'who acknowledged (fills identity)',
    },
  ],
  topLevel: (payload, top) => ({
    identity: top.acknowledgingIdentity,
    resource:
      typeof payload.policy_name === 'string' && typeof payload.policy_version === 'string'
        ? policyResource(payload.policy_name, payload.policy_version)
        : undefined,
  }),
};
