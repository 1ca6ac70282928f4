/**
 * derive-controls (docs/service.md "POST …/grc/derive-controls", docs/controls.md): a deterministic recommender from a system
 * description and its risk tier to record types, each `required`, `recommended` or `optional`,
 * with every control the type can earn. The rules are the data below, documented in
 * docs/controls.md; change both together.
 *
 * A record type's priority is the highest of: its tier rule, every keyword rule that matches the
 * description, and the floor (governance_review and policy_acknowledged are always at least
 * optional). Types no rule names are left out.
 */
import { RISK_LEVELS } from '../records/ai-risk-assessment.js';
import type { RecordType } from '../records/types.js';
import { earnableControls } from './mapping.js';

/** The risk tiers derive-controls accepts: the `risk_level` values of an ai_risk_assessment. */
export const RISK_TIERS = RISK_LEVELS;
export type RiskTier = (typeof RISK_TIERS)[number];

/** Priorities from highest to lowest; the order of the recommendations. */
export const PRIORITIES = ['required', 'recommended', 'optional'] as const;
export type Priority = (typeof PRIORITIES)[number];

/** A recommendation, exactly the wire shape of docs/service.md "POST …/grc/derive-controls". */
export interface ControlRecommendation {
  record_type: RecordType;
  priority: Priority;
  controls: string[];
}

type PriorityMap = Readonly<Partial<Record<RecordType, Priority>>>;

/** Priorities by risk tier alone. */
export const DERIVE_TIER_RULES: Readonly<Record<RiskTier, PriorityMap>> = {
  // Prohibited practice (EU AI Act Art 5): everything needed to reassess or withdraw the system.
  unacceptable: {
    ai_risk_assessment: 'required',
    governance_review: 'required',
    model_evaluation: 'required',
    human_oversight: 'required',
    training_data_governance: 'required',
    incident_report: 'required',
    model_drift_event: 'required',
    policy_acknowledged: 'required',
    change_event: 'recommended',
    access_review: 'recommended',
    vendor_risk: 'recommended',
  },
  // High risk (Art 6, Annex III): the Chapter III obligations (Art 9–15, 72, 73).
  high: {
    ai_risk_assessment: 'required',
    model_evaluation: 'required',
    human_oversight: 'required',
    training_data_governance: 'required',
    incident_report: 'required',
    model_drift_event: 'required',
    governance_review: 'recommended',
    change_event: 'recommended',
    policy_acknowledged: 'recommended',
    access_review: 'optional',
    vendor_risk: 'optional',
  },
  // Limited risk (Art 50 transparency): the classification itself, then good practice.
  limited: {
    ai_risk_assessment: 'required',
    model_evaluation: 'recommended',
    human_oversight: 'recommended',
    incident_report: 'recommended',
    governance_review: 'optional',
    policy_acknowledged: 'optional',
    training_data_governance: 'optional',
    model_drift_event: 'optional',
    change_event: 'optional',
  },
  // Minimal risk: a documented classification is worth having; the rest is voluntary.
  minimal: {
    ai_risk_assessment: 'recommended',
    model_evaluation: 'optional',
    governance_review: 'optional',
    policy_acknowledged: 'optional',
  },
};

export interface KeywordRule {
  readonly id: string;
  /** what the rule is about, for documentation */
  readonly about: string;
  /** whole words or phrases, lower case; matching ignores case and punctuation, and allows a plural `s` */
  readonly keywords: readonly string[];
  readonly raises: PriorityMap;
}

/** Priorities raised by words in the description. */
export const DERIVE_KEYWORD_RULES: readonly KeywordRule[] = [
  {
    id: 'high_impact_use',
    about: 'uses listed in EU AI Act Annex III (credit, employment, biometrics, health, education, law enforcement, migration, justice)',
    keywords: [
      'credit',
      'creditworthiness',
      'loan',
      'lending',
      'mortgage',
      'underwriting',
      'insurance',
      'hiring',
      'recruitment',
      'recruiting',
      'employment',
      'applicant',
      'biometric',
      'facial recognition',
      'face recognition',
      'medical',
      'healthcare',
      'clinical',
      'patient',
      'diagnosis',
      'education',
      'student',
      'exam',
      'admission',
      'law enforcement',
      'police',
      'policing',
      'migration',
      'asylum',
      'border control',
      'court',
      'judicial',
    ],
    raises: {
      ai_risk_assessment: 'required',
      model_evaluation: 'required',
      human_oversight: 'required',
      training_data_governance: 'required',
      incident_report: 'recommended',
      model_drift_event: 'recommended',
    },
  },
  {
    id: 'safety_critical',
    about: 'systems whose failure can cause physical harm',
    keywords: [
      'safety critical',
      'safety component',
      'autonomous',
      'self driving',
      'medical device',
      'critical infrastructure',
      'power grid',
      'energy grid',
      'water supply',
      'aviation',
      'robotics',
    ],
    raises: { incident_report: 'required', model_drift_event: 'required', human_oversight: 'required' },
  },
  {
    id: 'third_party',
    about: 'models or services from another company',
    keywords: [
      'vendor',
      'third party',
      'supplier',
      'api',
      'openai',
      'anthropic',
      'gpt',
      'claude',
      'gemini',
      'bedrock',
      'hugging face',
      'huggingface',
      'saas',
      'hosted model',
    ],
    raises: { vendor_risk: 'recommended' },
  },
  {
    id: 'software_delivery',
    about: 'deployment and release processes',
    keywords: ['deploy', 'deployed', 'deployment', 'ci', 'cd', 'continuous integration', 'continuous delivery', 'release', 'pipeline', 'rollout'],
    raises: { change_event: 'recommended' },
  },
  {
    id: 'personal_data',
    about: 'personal or customer data',
    keywords: ['personal data', 'personal information', 'pii', 'customer', 'consumer', 'gdpr', 'user data', 'sensitive data'],
    raises: { access_review: 'recommended', training_data_governance: 'recommended' },
  },
  {
    id: 'model_training',
    about: 'models trained or fine-tuned in house',
    keywords: ['train', 'trained', 'training data', 'fine tune', 'fine tuned', 'fine tuning', 'finetune', 'finetuned', 'dataset'],
    raises: { training_data_governance: 'recommended' },
  },
  {
    id: 'generative_ai',
    about: 'chatbots, assistants and generative models (EU AI Act Art 50 transparency)',
    keywords: ['chatbot', 'chat bot', 'generative', 'llm', 'large language model', 'assistant', 'copilot', 'agent', 'agentic'],
    raises: { model_evaluation: 'recommended', human_oversight: 'recommended' },
  },
  {
    id: 'production_monitoring',
    about: 'systems running live, where performance can drift',
    keywords: ['production', 'real time', 'realtime', 'live traffic', 'monitoring'],
    raises: { model_drift_event: 'recommended' },
  },
];

/** Types that are always recommended at least at this priority. */
export const DERIVE_FLOOR: PriorityMap = { governance_review: 'optional', policy_acknowledged: 'optional' };

const RANK: Readonly<Record<Priority, number>> = { required: 0, recommended: 1, optional: 2 };

/** Lower case, every run of characters other than letters and digits as one space, padded with spaces. */
function normalise(text: string): string {
  return ` ${text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()} `;
}

const compiledRules = DERIVE_KEYWORD_RULES.map((rule) => ({ rule, phrases: rule.keywords.map((keyword) => normalise(keyword).trim()) }));

function mentions(text: string, phrase: string): boolean {
  return text.includes(` ${phrase} `) || text.includes(` ${phrase}s `);
}

export function isRiskTier(value: unknown): value is RiskTier {
  return typeof value === 'string' && (RISK_TIERS as readonly string[]).includes(value);
}

/** The ids of the keyword rules a description matches, in rule order. */
export function matchedKeywordRules(description: string): string[] {
  const text = normalise(description);
  return compiledRules.filter(({ phrases }) => phrases.some((phrase) => mentions(text, phrase))).map(({ rule }) => rule.id);
}

/**
 * Recommends record types for a system: required first, then recommended, then optional, each
 * group by record type name; `controls` lists every control the type can earn (sorted).
 *
 * @throws RangeError for a risk tier outside {@link RISK_TIERS} (exact, lower case); the service
 *   checks with {@link isRiskTier} first and answers 422 with `field: risk_tier`.
 * @example deriveControls('Scores consumer loan applications', 'high')[0]
 * // { record_type: 'ai_risk_assessment', priority: 'required', controls: ['EUAIA_ART11', …] }
 */
export function deriveControls(description: string, riskTier: string): ControlRecommendation[] {
  if (!isRiskTier(riskTier)) throw new RangeError(`unknown risk tier ${JSON.stringify(riskTier)}; expected one of: ${RISK_TIERS.join(', ')}`);
  const chosen = new Map<RecordType, Priority>();
  const raise = (map: PriorityMap): void => {
    for (const [type, priority] of Object.entries(map) as [RecordType, Priority][]) {
      const current = chosen.get(type);
      if (current === undefined || RANK[priority] < RANK[current]) chosen.set(type, priority);
    }
  };
  raise(DERIVE_TIER_RULES[riskTier]);
  const matched = new Set(matchedKeywordRules(typeof description === 'string' ? description : ''));
  for (const rule of DERIVE_KEYWORD_RULES) if (matched.has(rule.id)) raise(rule.raises);
  raise(DERIVE_FLOOR);
  return [...chosen]
    .sort(([typeA, a], [typeB, b]) => RANK[a] - RANK[b] || (typeA < typeB ? -1 : typeA > typeB ? 1 : 0))
    .map(([record_type, priority]) => ({
      record_type,
      priority,
      controls: earnableControls(record_type).map((entry) => entry.control_id),
    }));
}
