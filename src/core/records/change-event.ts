import { ENVIRONMENTS, type RecordTypeSpec } from './types.js';

export const changeEvent: RecordTypeSpec = {
  type: 'change_event',
  method: 'changeEvent',
  title: 'Change event',
  summary: 'A deployment, configuration or prompt change (SOC 2 CC8.1, ISO 27001 8.32)',
  fields: [
    {
      wire: 'type',
      input: 'changeKind',
      kind: 'string',
      required: true,
      example: 'deployment',
      description: 'kind of change: deployment, config, prompt_update, …',
    },
    { wire: 'by', input: 'actor', kind: 'string', required: true, example: 'ci@example.com', description: 'who made the change (fills identity)' },
    {
      wire: 'description',
      input: 'summary',
      kind: 'string',
      required: true,
      example: 'Deploy loan-scorer 2.3.0 with recalibrated thresholds',
      description: 'what changed',
    },
    {
      wire: 'environment',
      input: 'environment',
      kind: 'string',
      required: true,
      enum: ENVIRONMENTS,
      example: 'production',
      description: 'where it was changed (fills environment)',
    },
    { wire: 'system', input: 'system', kind: 'string', required: true, example: 'loan-scorer', description: 'system changed (fills resource)' },
    { wire: 'change_id', input: 'changeId', kind: 'string', required: false, example: 'deploy-2417', description: 'ticket, commit or deploy id' },
  ],
  topInputs: [],
  topLevel: (payload) => ({
    identity: payload.by as string,
    resource: payload.system as string,
    environment: payload.environment as string,
  }),
};
