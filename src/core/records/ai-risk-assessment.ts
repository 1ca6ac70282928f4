import { ENVIRONMENTS, type RecordTypeSpec } from './types.js';

export const RISK_LEVELS = ['unacceptable', 'high', 'limited', 'minimal'] as const;
export const ANNEX_III_CATEGORIES = [
  'biometric_identification',
  'critical_infrastructure',
  'education_vocational',
  'employment_management',
  'essential_services',
  'law_enforcement',
  'migration_border',
  'justice_democratic',
  'not_annex_iii',
] as const;

export const aiRiskAssessment: RecordTypeSpec = {
  type: 'ai_risk_assessment',
  method: 'aiRiskAssessment',
  title: 'AI risk assessment',
  summary: 'A risk classification of an AI system (EU AI Act Art 9, ISO 42001 A.6.1)',
  systemFromInput: 'systemName',
  fields: [
    { wire: 'risk_level', input: 'riskLevel', kind: 'string', required: true, enum: RISK_LEVELS, example: 'high', description: 'risk classification' },
    {
      wire: 'risk_summary',
      input: 'summary',
      kind: 'string',
      required: true,
      example: 'Scores consumer loan applications; a wrong score can deny someone credit',
      description: 'what the system does and why it carries this risk',
    },
    {
      wire: 'intended_purpose',
      input: 'intendedPurpose',
      kind: 'string',
      required: true,
      example: 'Rank loan applications for review by human underwriters',
      description: 'intended purpose of the system',
    },
    {
      wire: 'impact_domains',
      input: 'impactDomains',
      kind: 'string[]',
      required: true,
      flag: 'impact-domain',
      example: ['credit', 'consumer_finance'],
      description: 'domains the system affects (repeat the flag)',
    },
    {
      wire: 'art5_self_assessment',
      input: 'art5SelfAssessment',
      kind: 'boolean',
      required: true,
      example: true,
      description: 'a human certifies that no prohibited (Art 5) practice applies; never defaulted',
    },
    {
      wire: 'annex_iii_category',
      input: 'annexIiiCategory',
      kind: 'string',
      required: false,
      enum: ANNEX_III_CATEGORIES,
      example: 'essential_services',
      description: 'EU AI Act Annex III category; required when the risk level is high',
    },
    { wire: 'system_version', input: 'systemVersion', kind: 'string', required: false, example: '2.3.0', description: 'version of the assessed system' },
    {
      wire: 'technical_doc_url',
      input: 'technicalDocUrl',
      kind: 'string',
      required: false,
      example: 'https://docs.example.com/loan-scorer/technical',
      description: 'link to the technical documentation',
    },
    {
      wire: 'training_data_url',
      input: 'trainingDataUrl',
      kind: 'string',
      required: false,
      example: 'https://docs.example.com/loan-scorer/training-data',
      description: 'link to the training-data documentation',
    },
    { wire: 'notes', input: 'notes', kind: 'string', required: false, example: 'Reviewed with the credit risk committee', description: 'free text' },
  ],
  topInputs: [
    {
      input: 'assessor',
      flag: 'assessor',
      kind: 'string',
      required: true,
      example: 'alice@example.com',
      description: 'who made the assessment (fills identity)',
    },
    {
      input: 'environment',
      flag: 'environment',
      kind: 'string',
      required: false,
      enum: ENVIRONMENTS,
      example: 'production',
      description: 'environment assessed (default production)',
    },
  ],
  rules: (payload) =>
    payload.risk_level === 'high' && (payload.annex_iii_category === undefined || payload.annex_iii_category === null)
      ? [{ path: 'payload.annex_iii_category', code: 'rule', message: 'is required when risk_level is high (EU AI Act Annex III)' }]
      : [],
  topLevel: (_payload, top) => ({
    identity: top.assessor,
    resource: top.systemName,
    environment: top.environment ?? 'production',
  }),
};
