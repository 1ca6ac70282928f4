import type { RecordTypeSpec } from './types.js';

export const modelEvaluation: RecordTypeSpec = {
  type: 'model_evaluation',
  method: 'modelEvaluation',
  title: 'Model evaluation',
  summary: 'An accuracy, robustness or bias evaluation of a model (EU AI Act Art 15)',
  fields: [
    { wire: 'model_id', input: 'modelName', kind: 'string', required: true, example: 'loan-scorer-2.3', description: 'model evaluated' },
    { wire: 'dataset', input: 'datasetName', kind: 'string', required: true, example: 'holdout-2026q1', description: 'evaluation dataset' },
    { wire: 'accuracy', input: 'score', kind: 'number', required: true, example: 0.91, description: 'headline score' },
    { wire: 'evaluated_by', input: 'evaluatedBy', kind: 'string', required: true, example: 'ml-eval@example.com', description: 'who ran the evaluation (fills identity)' },
    { wire: 'evaluation_type', input: 'evaluationType', kind: 'string', required: false, enum: ['initial', 'quarterly', 'triggered'], default: 'quarterly', example: 'quarterly', description: 'why it was run' },
    { wire: 'bias_metrics', input: 'biasMetrics', kind: 'number-map', required: false, flag: 'bias-metric', example: { demographic_parity: 0.04 }, description: 'bias metrics as name=value (repeat the flag); earns the bias controls' },
    { wire: 'robustness_score', input: 'robustnessScore', kind: 'number', required: false, example: 0.87, description: 'robustness score; earns the Art 15 robustness control' },
    { wire: 'passed_threshold', input: 'passedThreshold', kind: 'boolean', required: false, example: true, description: 'whether the model met its acceptance threshold' },
    { wire: 'notes', input: 'notes', kind: 'string', required: false, example: 'Accuracy within 1 point of the last quarter', description: 'free text' },
  ],
  topInputs: [],
  topLevel: (payload) => ({ identity: payload.evaluated_by as string, resource: payload.model_id as string }),
};
