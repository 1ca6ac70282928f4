import type { RecordTypeSpec } from './types.js';

export const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;

export const incidentReport: RecordTypeSpec = {
  type: 'incident_report',
  method: 'incidentReport',
  title: 'Incident report',
  summary: 'A serious incident or malfunction and its reporting (EU AI Act Art 73)',
  fields: [
    { wire: 'title', input: 'title', kind: 'string', required: true, example: 'Loan scores withheld for 40 minutes', description: 'short title' },
    { wire: 'severity', input: 'severity', kind: 'string', required: true, enum: SEVERITIES, example: 'medium', description: 'severity' },
    {
      wire: 'description',
      input: 'description',
      kind: 'string',
      required: true,
      example: 'A configuration change sent every application to manual review',
      description: 'what happened',
    },
    {
      wire: 'affected_systems',
      input: 'affectedSystems',
      kind: 'string[]',
      required: true,
      flag: 'affected-system',
      example: ['loan-scorer'],
      description: 'systems affected (repeat the flag)',
    },
    {
      wire: 'authority_notified_at',
      input: 'authorityNotifiedAt',
      kind: 'datetime',
      required: false,
      example: '2026-01-31T16:00:00Z',
      description: 'when the authority was notified (ISO 8601)',
    },
  ],
  topInputs: [
    {
      input: 'detectedAt',
      flag: 'detected-at',
      kind: 'datetime',
      required: false,
      example: '2026-01-31T09:30:00Z',
      description: 'when it was detected (fills occurred_at; default now)',
    },
  ],
  topLevel: (_payload, top) => ({ occurred_at: top.detectedAt }),
};
