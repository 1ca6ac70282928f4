import type { RecordTypeSpec } from './types.js';

export const modelEvaluation: RecordTypeSpec = {
  type: 'model_evaluation',
  method: 'modelEvaluation',
  title: 'Model evaluation',
  summary: 'An accuracy, robustness or bias evaluation of a model (EU AI Act Art 15)',
  fields: [
    { wire: 'model_id', input: 'modelName', kind: 'string', required: true, description: 'model evaluated' },
    { wire: 'dataset', input: 'datasetName', kind: 'string', required: true, description: 'evaluation dataset' },
    { wire: 'accuracy', input: 'score', kind: 'number', required: true, description: 'headline score' },
    { wire: 'evaluated_by', input: 'evaluatedBy', kind: 'string', required: true, description: 'who ran the evaluation (fills identity)' },
    { wire: 'evaluation_type', input: 'evaluationType', kind: 'string', required: false, enum: ['initial', 'quarterly', 'triggered'], default: 'quarterly', description: 'why it was run' },
    { wire: 'bias_metrics', input: 'biasMetrics', kind: 'number-map', required: false, flag: 'bias-metric', description: 'bias metrics as name=value (repeat the flag); earns the bias controls' },
    { wire: 'robustness_score', input: 'robustnessScore', kind: 'number', required: false, description: 'robustness score; earns the Art 15 robustness control' },
    { wire: 'passed_threshold', input: 'passedThreshold', kind: 'boolean', required: false, description: 'whether the model met its acceptance threshold' },
    { wire: 'notes', input: 'notes', kind: 'string', required: false, description: 'free text' },
  ],
  topInputs: [],
  topLevel: (payload) => ({ identity: payload.evaluated_by as string, resource: payload.model_id as string }),
};
