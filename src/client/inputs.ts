/**
 * What each record method of {@link GovernanceClient} takes (docs/wire-format.md "Evidence records", camelCase) and returns.
 *
 * These interfaces give users types; the mapping from these inputs to payload keys, the
 * defaults, the enums and the checks live in the record-type catalogue (src/core/records/),
 * which the client reads at run time. A method's required inputs here are the catalogue's
 * required ones; a test builds every record type from these interfaces.
 */
import type { ANNEX_III_CATEGORIES, RISK_LEVELS, SEVERITIES } from '../core/records/index.js';
import type { ENVIRONMENTS, FRAMEWORKS } from '../core/records/types.js';
import type { AttestationError } from './errors.js';

export type Environment = (typeof ENVIRONMENTS)[number];
export type RiskLevel = (typeof RISK_LEVELS)[number];
export type AnnexIiiCategory = (typeof ANNEX_III_CATEGORIES)[number];
export type Severity = (typeof SEVERITIES)[number];
export type FrameworkSlug = (typeof FRAMEWORKS)[number];

/** A timestamp: an ISO 8601 string (`2026-01-31T09:30:00Z`) or a `Date`. */
export type Timestamp = string | Date;

/**
 * Inputs every record method accepts. The top-level members are otherwise filled as docs/service.md "Record payloads"
 * says for each type; these override them.
 */
export interface CommonRecordInput {
  /** when it happened (default: now, UTC with milliseconds) */
  occurredAt?: Timestamp;
  /** the actor (overrides the type's default, e.g. the assessor) */
  identity?: string;
  /** the resource affected (overrides the type's default, e.g. the model) */
  resource?: string;
  /** production, staging or development */
  environment?: Environment;
  /** compute the controls the record would earn and store nothing (docs/service.md "POST …/grc/evidence") */
  dryRun?: boolean;
}

/** `aiRiskAssessment(...)`: a risk classification of an AI system. */
export interface AiRiskAssessmentInput extends CommonRecordInput {
  /** the assessed system (not the client's configured system) */
  systemName: string;
  riskLevel: RiskLevel;
  /** what the system does and why it carries this risk */
  summary: string;
  intendedPurpose: string;
  /** at least one */
  impactDomains: string[];
  /** a human certifies that no prohibited (Art 5) practice applies; never defaulted */
  art5SelfAssessment: boolean;
  /** who made the assessment (fills identity) */
  assessor: string;
  /** required when riskLevel is `high` */
  annexIiiCategory?: AnnexIiiCategory;
  /** environment assessed (default production) */
  environment?: Environment;
  systemVersion?: string;
  technicalDocUrl?: string;
  trainingDataUrl?: string;
  notes?: string;
}

/** `modelEvaluation(...)`: an accuracy, robustness or bias evaluation. */
export interface ModelEvaluationInput extends CommonRecordInput {
  modelName: string;
  datasetName: string;
  /** headline score (sent as `accuracy`) */
  score: number;
  evaluatedBy: string;
  /** default `quarterly` */
  evaluationType?: 'initial' | 'quarterly' | 'triggered';
  /** name → number; earns the bias controls */
  biasMetrics?: Record<string, number>;
  /** earns the Art 15 robustness control */
  robustnessScore?: number;
  passedThreshold?: boolean;
  notes?: string;
}

/** `humanOversight(...)`: a human review of an AI decision; `override` is inferred when absent. */
export interface HumanOversightInput extends CommonRecordInput {
  /** the decision or case reviewed */
  subjectId: string;
  /** what the AI proposed */
  proposedDecision: string;
  /** what the human decided */
  finalDecision: string;
  reviewer: string;
  /** default: proposedDecision !== finalDecision */
  override?: boolean;
  rationale?: string;
  modelId?: string;
}

/** `trainingDataGovernance(...)`: approval of a training dataset. */
export interface TrainingDataGovernanceInput extends CommonRecordInput {
  modelName: string;
  datasetName: string;
  /** a whole number */
  recordCount: number;
  biasChecksPerformed: boolean;
  approvedBy: string;
  /** at least one */
  dataSources: string[];
  /** at least one */
  dataCategories: string[];
  knownLimitations?: string;
}

/** `incidentReport(...)`: a serious incident or malfunction. */
export interface IncidentReportInput extends CommonRecordInput {
  title: string;
  severity: Severity;
  description: string;
  /** at least one */
  affectedSystems: string[];
  /** when it was detected (fills occurred_at; default now) */
  detectedAt?: Timestamp;
  authorityNotifiedAt?: Timestamp;
}

/** `accessReview(...)`: a review of who may access a resource. */
export interface AccessReviewInput extends CommonRecordInput {
  /** whose access was reviewed (fills identity) */
  subjectIdentity: string;
  /** the resource reviewed (fills resource) */
  resource: string;
  accessGranted: boolean;
  reviewedBy: string;
  /** default `periodic` */
  reviewType?: 'periodic' | 'triggered' | 'initial' | 'offboarding';
  reason?: string;
}

/** `changeEvent(...)`: a deployment, configuration or prompt change. */
export interface ChangeEventInput extends CommonRecordInput {
  /** deployment, config, prompt_update, … */
  changeKind: string;
  /** who made the change (fills identity) */
  actor: string;
  /** what changed */
  summary: string;
  environment: Environment;
  /** the system changed (fills resource) */
  system: string;
  changeId?: string;
}

/** `vendorRisk(...)`: a risk review of a third-party vendor. */
export interface VendorRiskInput extends CommonRecordInput {
  vendorName: string;
  riskLevel: Severity;
  /** date of the review: `YYYY-MM-DD` or a `Date` */
  lastReviewed: string | Date;
  /** open findings, a whole number (default 0) */
  findings?: number;
  contacts?: string[];
}

/** `policyAcknowledged(...)`: a person acknowledged a policy. */
export interface PolicyAcknowledgedInput extends CommonRecordInput {
  policyName: string;
  /** who acknowledged (fills identity) */
  acknowledgingIdentity: string;
  /** policy version */
  version: string;
  /** default `initial` */
  acknowledgmentType?: 'initial' | 'renewal' | 'update';
  policyUrl?: string;
  /** default `in-app` */
  channel?: string;
  sessionId?: string;
}

/** `modelDriftEvent(...)`: a monitored metric drifted past its threshold. */
export interface ModelDriftEventInput extends CommonRecordInput {
  modelName: string;
  metricName: string;
  baselineValue: number;
  observedValue: number;
  threshold: number;
  detectedBy: string;
  /** default `performance` */
  driftType?: 'performance' | 'data' | 'concept';
  actionTaken?: string;
}

/** `governanceReview(...)`: a periodic management review of governance readiness. */
export interface GovernanceReviewInput extends CommonRecordInput {
  reviewerIdentity: string;
  /** e.g. quarterly */
  reviewCadence: string;
  /** at least one */
  frameworksReviewed: FrameworkSlug[];
  /** 0–100 */
  overallReadiness: number;
  /** a whole number (default 0) */
  actionItems?: number;
  notes?: string;
}

/** The input of each record method, by method name (the catalogue's `method`). */
export interface RecordInputs {
  aiRiskAssessment: AiRiskAssessmentInput;
  governanceReview: GovernanceReviewInput;
  modelEvaluation: ModelEvaluationInput;
  trainingDataGovernance: TrainingDataGovernanceInput;
  humanOversight: HumanOversightInput;
  incidentReport: IncidentReportInput;
  changeEvent: ChangeEventInput;
  accessReview: AccessReviewInput;
  vendorRisk: VendorRiskInput;
  modelDriftEvent: ModelDriftEventInput;
  policyAcknowledged: PolicyAcknowledgedInput;
}

/**
 * What a record method returns (docs/service.md "POST …/grc/evidence" in camelCase). An empty `recordId` means the record was
 * not stored (docs/library.md "Error modes"): `detail` says why and `error` holds the error.
 */
export interface RecordResult {
  /** `rec_…`; the nil UUID in a dry run; '' when the record was not stored */
  recordId: string;
  recordType: string;
  /** control ids the record earns (or would earn, in a dry run) */
  mappedControls: string[];
  /** `ok`, `dry_run`, or why it failed */
  detail: string;
  /**
   * true when the service had stored this record already (the same record sent before: its
   * idempotency key, derived from the content): `recordId` is the first write's, nothing new was stored
   */
  replayed?: boolean;
  /** the failure, when `recordId` is '' */
  error?: AttestationError;
}

/** The record methods, one per record type (generated from the catalogue at run time). */
export type RecordMethods = {
  [M in keyof RecordInputs]: (input: RecordInputs[M]) => Promise<RecordResult>;
};
