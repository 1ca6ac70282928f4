import type { RecordTypeSpec } from './types.js';

export const humanOversight: RecordTypeSpec = {
  type: 'human_oversight',
  method: 'humanOversight',
  title: 'Human oversight',
  summary: 'A human review of an AI decision (EU AI Act Art 14)',
  fields: [
    {
      wire: 'decision_id',
      input: 'subjectId',
      kind: 'string',
      required: true,
      example: 'loan-application-88412',
      description: 'the decision or case reviewed',
    },
    { wire: 'ai_recommendation', input: 'proposedDecision', kind: 'string', required: true, example: 'decline', description: 'what the AI proposed' },
    { wire: 'human_decision', input: 'finalDecision', kind: 'string', required: true, example: 'approve', description: 'what the human decided' },
    { wire: 'reviewer', input: 'reviewer', kind: 'string', required: true, example: 'priya.shah@example.com', description: 'who reviewed (fills identity)' },
    {
      wire: 'override',
      input: 'override',
      kind: 'boolean',
      required: false,
      example: true,
      description: 'the human overrode the AI; inferred from the two decisions when not given',
    },
    {
      wire: 'rationale',
      input: 'rationale',
      kind: 'string',
      required: false,
      example: 'Income confirmed by payslips the model did not see',
      description: 'why',
    },
    { wire: 'model_id', input: 'modelId', kind: 'string', required: false, example: 'loan-scorer-2.3', description: 'model that made the recommendation' },
  ],
  topInputs: [],
  // The override flag is inferred as true when the two decisions differ.
  derivePayload: (payload) => {
    if (payload.override === undefined && typeof payload.ai_recommendation === 'string' && typeof payload.human_decision === 'string') {
      payload.override = payload.ai_recommendation !== payload.human_decision;
    }
  },
  topLevel: (payload) => ({ identity: payload.reviewer as string, resource: payload.decision_id as string }),
};
