import type { RecordTypeSpec } from './types.js';
import { SEVERITIES } from './incident-report.js';

export const vendorRisk: RecordTypeSpec = {
  type: 'vendor_risk',
  method: 'vendorRisk',
  title: 'Vendor risk',
  summary: 'A risk review of a third-party AI or data vendor (SOC 2 CC9.2)',
  fields: [
    { wire: 'vendor', input: 'vendorName', kind: 'string', required: true, example: 'Acme Model APIs', description: 'vendor reviewed (fills resource)' },
    { wire: 'tier', input: 'riskLevel', kind: 'string', required: true, enum: SEVERITIES, example: 'medium', description: 'vendor risk tier' },
    { wire: 'last_reviewed', input: 'lastReviewed', kind: 'date', required: true, example: '2026-01-15', description: 'date of the review (YYYY-MM-DD)' },
    { wire: 'findings', input: 'findings', kind: 'integer', required: false, min: 0, default: 0, example: 1, description: 'number of open findings' },
    {
      wire: 'contacts',
      input: 'contacts',
      kind: 'string[]',
      required: false,
      flag: 'contact',
      example: ['security@acme.example'],
      description: 'vendor contacts (repeat the flag)',
    },
  ],
  topInputs: [],
  topLevel: (payload) => ({ resource: payload.vendor as string }),
};
