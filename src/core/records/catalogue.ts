/**
 * The record-type catalogue: the single list of the 11 record types (docs/wire-format.md "Evidence records", docs/service.md "Record payloads").
 * CLI flags, client methods, payload mapping, validation and help text all read it.
 */
import { accessReview } from './access-review.js';
import { aiRiskAssessment } from './ai-risk-assessment.js';
import { changeEvent } from './change-event.js';
import { governanceReview } from './governance-review.js';
import { humanOversight } from './human-oversight.js';
import { incidentReport } from './incident-report.js';
import { modelDriftEvent } from './model-drift-event.js';
import { modelEvaluation } from './model-evaluation.js';
import { policyAcknowledged } from './policy-acknowledged.js';
import { trainingDataGovernance } from './training-data-governance.js';
import { RECORD_TYPES, type RecordType, type RecordTypeSpec } from './types.js';
import { vendorRisk } from './vendor-risk.js';

const specs: readonly RecordTypeSpec[] = [
  aiRiskAssessment,
  governanceReview,
  modelEvaluation,
  trainingDataGovernance,
  humanOversight,
  incidentReport,
  changeEvent,
  accessReview,
  vendorRisk,
  modelDriftEvent,
  policyAcknowledged,
];

/** Every record type's spec, in the specification's order. */
export const CATALOGUE: ReadonlyMap<RecordType, RecordTypeSpec> = new Map(specs.map((spec) => [spec.type, spec]));

if (CATALOGUE.size !== RECORD_TYPES.length || !RECORD_TYPES.every((type) => CATALOGUE.has(type))) {
  throw new Error('record-type catalogue and RECORD_TYPES disagree');
}

export function isRecordType(value: unknown): value is RecordType {
  return typeof value === 'string' && CATALOGUE.has(value as RecordType);
}

/** The spec of a record type; throws on an unknown type (callers validate first). */
export function recordTypeSpec(type: RecordType): RecordTypeSpec {
  const spec = CATALOGUE.get(type);
  if (!spec) throw new Error(`unknown record type: ${type}`);
  return spec;
}
