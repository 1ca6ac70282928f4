import { FRAMEWORKS, type RecordTypeSpec } from './types.js';

export const governanceReview: RecordTypeSpec = {
  type: 'governance_review',
  method: 'governanceReview',
  title: 'Governance review',
  summary: 'A periodic management review of AI governance readiness (ISO 42001 9.3)',
  fields: [
    { wire: 'reviewed_by', input: 'reviewerIdentity', kind: 'string', required: true, example: 'governance-board@example.com', description: 'who reviewed (fills identity)' },
    { wire: 'report_type', input: 'reviewCadence', kind: 'string', required: true, example: 'quarterly', description: 'review cadence, e.g. quarterly' },
    { wire: 'frameworks_reviewed', input: 'frameworksReviewed', kind: 'string[]', required: true, enum: FRAMEWORKS, flag: 'framework-reviewed', example: ['eu_ai_act', 'iso_42001'], description: 'frameworks reviewed (repeat the flag)' },
    { wire: 'overall_readiness', input: 'overallReadiness', kind: 'number', required: true, min: 0, max: 100, example: 82.5, description: 'readiness in percent, 0–100' },
    { wire: 'action_items', input: 'actionItems', kind: 'integer', required: false, min: 0, default: 0, example: 3, description: 'number of open action items' },
    { wire: 'notes', input: 'notes', kind: 'string', required: false, example: 'Logging retention gap carried over from Q4', description: 'free text' },
  ],
  topInputs: [],
  topLevel: (payload) => ({ identity: payload.reviewed_by as string }),
};
