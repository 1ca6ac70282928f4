import type { RecordTypeSpec } from './types.js';

export const humanOversight: RecordTypeSpec = {
  type: 'human_oversight',
  method: 'humanOversight',
  title: 'Human oversight',
  summary: 'A human review of an AI decision (EU AI Act Art 14)',
  fields: [
    { wire: 'decision_id', input: 'subjectId', kind: 'string', required: true, description: 'the decision or case reviewed' },
    { wire: 'ai_recommendation', input: 'proposedDecision', kind: 'string', required: true, description: 'what the AI proposed' },
    { wire: 'human_decision', input: 'finalDecision', kind: 'string', required: true, description: 'what the human decided' },
    { wire: 'reviewer', input: 'reviewer', kind: 'string', required: true, description: 'who reviewed (fills identity)' },
    { wire: 'override', input: 'override', kind: 'boolean', required: false, description: 'the human overrode the AI; inferred from the two decisions when not given' },
    { wire: 'rationale', input: 'rationale', kind: 'string', required: false, description: 'why' },
    { wire: 'model_id', input: 'modelId', kind: 'string', required: false, description: 'model that made the recommendation' },
  ],
  topInputs: [],
  // Spec §2.2: the override flag is inferred as true when the two decisions differ.
  derivePayload: (payload) => {
    if (payload.override === undefined && typeof payload.ai_recommendation === 'string' && typeof payload.human_decision === 'string') {
      payload.override = payload.ai_recommendation !== payload.human_decision;
    }
  },
  topLevel: (payload) => ({ identity: payload.reviewer as string, resource: payload.decision_id as string }),
};
