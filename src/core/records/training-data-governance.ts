import type { RecordTypeSpec } from './types.js';

export const trainingDataGovernance: RecordTypeSpec = {
  type: 'training_data_governance',
  method: 'trainingDataGovernance',
  title: 'Training-data governance',
  summary: 'Approval of a training dataset with its sources and bias checks (EU AI Act Art 10)',
  fields: [
    { wire: 'model_id', input: 'modelName', kind: 'string', required: true, example: 'loan-scorer-2.3', description: 'model trained on the dataset' },
    { wire: 'dataset_id', input: 'datasetName', kind: 'string', required: true, example: 'loan-applications-2025', description: 'dataset approved (fills resource)' },
    { wire: 'record_count', input: 'recordCount', kind: 'integer', required: true, min: 0, example: 120000, description: 'number of records in the dataset' },
    { wire: 'bias_checks_performed', input: 'biasChecksPerformed', kind: 'boolean', required: true, example: true, description: 'whether bias checks were run' },
    { wire: 'approved_by', input: 'approvedBy', kind: 'string', required: true, example: 'dana.kim@example.com', description: 'who approved (fills identity)' },
    { wire: 'data_sources', input: 'dataSources', kind: 'string[]', required: true, flag: 'data-source', example: ['core-banking-export', 'credit-bureau-feed'], description: 'where the data came from (repeat the flag)' },
    { wire: 'data_categories', input: 'dataCategories', kind: 'string[]', required: true, flag: 'data-category', example: ['personal', 'financial'], description: 'categories of data, e.g. personal (repeat the flag)' },
    { wire: 'known_limitations', input: 'knownLimitations', kind: 'string', required: false, example: 'Few applicants under 21', description: 'known gaps or biases' },
  ],
  topInputs: [],
  topLevel: (payload) => ({ identity: payload.approved_by as string, resource: payload.dataset_id as string }),
};
