import type { RecordTypeSpec } from './types.js';

export const accessReview: RecordTypeSpec = {
  type: 'access_review',
  method: 'accessReview',
  title: 'Access review',
  summary: 'A review of who may access a resource (SOC 2 CC6)',
  fields: [
    {
      wire: 'user',
      input: 'subjectIdentity',
      kind: 'string',
      required: true,
      example: 'jordan.reed@example.com',
      description: 'whose access was reviewed (fills identity)',
    },
    {
      wire: 'resource',
      input: 'resource',
      kind: 'string',
      required: true,
      example: 'loan-scorer-admin-console',
      description: 'resource reviewed (fills resource)',
    },
    { wire: 'granted', input: 'accessGranted', kind: 'boolean', required: true, example: true, description: 'whether access is granted' },
    { wire: 'reviewed_by', input: 'reviewedBy', kind: 'string', required: true, example: 'it-security@example.com', description: 'who reviewed' },
    {
      wire: 'review_type',
      input: 'reviewType',
      kind: 'string',
      required: false,
      enum: ['periodic', 'triggered', 'initial', 'offboarding'],
      default: 'periodic',
      example: 'periodic',
      description: 'kind of review',
    },
    { wire: 'reason', input: 'reason', kind: 'string', required: false, example: 'Still on the credit risk team', description: 'why' },
  ],
  topInputs: [],
  topLevel: (payload) => ({ identity: payload.user as string, resource: payload.resource as string }),
};
