import { FRAMEWORKS, type RecordTypeSpec } from './types.js';

export const governanceReview: RecordTypeSpec = {
  type: 'governance_review',
  method: 'governanceReview',
  title: 'Governance review',
  summary: 'A periodic management review of AI governance readiness (ISO 42001 9.3)',
  fields: [
    { wire: 'reviewed_by', input: 'reviewerIdentity', kind: 'string', required: true, description: 'who reviewed (fills identity)' },
    { wire: 'report_type', input: 'reviewCadence', kind: 'string', required: true, description: 'review cadence, e.g. quarterly' },
    { wire: 'frameworks_reviewed', input: 'frameworksReviewed', kind: 'string[]', required: true, enum: FRAMEWORKS, flag: 'framework-reviewed', description: 'frameworks reviewed (repeat the flag)' },
    { wire: 'overall_readiness', input: 'overallReadiness', kind: 'number', required: true, min: 0, max: 100, description: 'readiness in percent, 0–100' },
    { wire: 'action_items', input: 'actionItems', kind: 'integer', required: false, min: 0, default: 0, description: 'number of open action items' },
    { wire: 'notes', input: 'notes', kind: 'string', required: false, description: 'free text' },
  ],
  topInputs: [],
  topLevel: (payload) => ({ identity: payload.reviewed_by as string }),
};
