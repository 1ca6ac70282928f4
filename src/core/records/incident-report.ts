import type { RecordTypeSpec } from './types.js';

export const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;

export const incidentReport: RecordTypeSpec = {
  type: 'incident_report',
  method: 'incidentReport',
  title: 'Incident report',
  summary: 'A serious incident or malfunction and its reporting (EU AI Act Art 73)',
  fields: [
    { wire: 'title', input: 'title', kind: 'string', required: true, description: 'short title' },
    { wire: 'severity', input: 'severity', kind: 'string', required: true, enum: SEVERITIES, description: 'severity' },
    { wire: 'description', input: 'description', kind: 'string', required: true, description: 'what happened' },
    { wire: 'affected_systems', input: 'affectedSystems', kind: 'string[]', required: true, flag: 'affected-system', description: 'systems affected (repeat the flag)' },
    { wire: 'authority_notified_at', input: 'authorityNotifiedAt', kind: 'datetime', required: false, description: 'when the authority was notified (ISO 8601)' },
  ],
  topInputs: [
    { input: 'detectedAt', flag: 'detected-at', kind: 'datetime', required: false, description: 'when it was detected (fills occurred_at; default now)' },
  ],
  topLevel: (_payload, top) => ({ occurred_at: top.detectedAt }),
};
