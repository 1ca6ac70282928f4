import type { RecordTypeSpec } from './types.js';

export const modelDriftEvent: RecordTypeSpec = {
  type: 'model_drift_event',
  method: 'modelDriftEvent',
  title: 'Model drift event',
  summary: 'A monitored metric drifted past its threshold (EU AI Act Art 72 post-market monitoring)',
  fields: [
    { wire: 'model_id', input: 'modelName', kind: 'string', required: true, example: 'loan-scorer-2.3', description: 'model monitored (fills resource)' },
    { wire: 'metric', input: 'metricName', kind: 'string', required: true, example: 'approval_rate', description: 'metric that drifted' },
    { wire: 'baseline', input: 'baselineValue', kind: 'number', required: true, example: 0.42, description: 'baseline value' },
    { wire: 'current', input: 'observedValue', kind: 'number', required: true, example: 0.35, description: 'observed value' },
    { wire: 'threshold', input: 'threshold', kind: 'number', required: true, example: 0.05, description: 'alerting threshold' },
    {
      wire: 'drift_type',
      input: 'driftType',
      kind: 'string',
      required: false,
      enum: ['performance', 'data', 'concept'],
      default: 'performance',
      example: 'data',
      description: 'kind of drift',
    },
    {
      wire: 'detected_by',
      input: 'detectedBy',
      kind: 'string',
      required: true,
      example: 'drift-monitor@example.com',
      description: 'monitor or person that detected it (fills identity)',
    },
    {
      wire: 'action_taken',
      input: 'actionTaken',
      kind: 'string',
      required: false,
      example: 'Rolled back to 2.2.1 pending retraining',
      description: 'response',
    },
  ],
  topInputs: [],
  topLevel: (payload) => ({ identity: payload.detected_by as string, resource: payload.model_id as string }),
};
