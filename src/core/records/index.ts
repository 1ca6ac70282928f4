export * from './types.js';
export * from './catalogue.js';
export * from './validate.js';
export * from './build.js';
export { RISK_LEVELS, ANNEX_III_CATEGORIES } from './ai-risk-assessment.js';
export { SEVERITIES } from './incident-report.js';
export { policyResource } from './policy-acknowledged.js';
export * from './examples.js';
