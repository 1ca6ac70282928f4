// @ts-check
/**
 * What the benchmarks send: valid GRC evidence records (ai_risk_assessment and model_evaluation,
 * about 1 KiB of JSON each, the shape of a real record with its free text) and distinct, validly
 * signed attestations (signed with core's signWitness, the same code the client uses).
 */
import { createHash, randomBytes } from 'node:crypto';

const FILLER =
  'The system scores consumer loan applications for underwriters; a human reviews every adverse decision. ' +
  'Inputs are application data and bureau data; outputs are a score and three reason codes. ';

/** @typedef {{ occurredAt?: string }} RecordOptions */

/** An ai_risk_assessment record, as a client sends it (wire names, top-level members filled). */
/**
 * @param {number} i
 * @param {RecordOptions} [options]
 */
export function riskAssessment(i, { occurredAt } = {}) {
  const system = `bench-system-${i % 50}`;
  return {
    record_type: /** @type {const} */ ('ai_risk_assessment'),
    system_name: system,
    identity: `assessor${i % 7}@example.com`,
    resource: system,
    environment: 'production',
    ...(occurredAt ? { occurred_at: occurredAt } : {}),
    payload: {
      risk_level: i % 3 === 0 ? 'high' : 'limited',
      annex_iii_category: 'essential_services',
      risk_summary: `${FILLER}Assessment ${i}: residual risk is acceptable with the listed mitigations in place.`,
      intended_purpose: 'Assist underwriters in prioritising consumer credit applications; never decides alone.',
      impact_domains: ['credit', 'employment', 'essential_services'],
      art5_self_assessment: true,
      system_version: `2.${i % 10}.${i % 100}`,
      technical_doc_url: 'https://docs.example.com/ai/loan-scorer/technical-documentation',
      notes: `${FILLER}Reviewed with legal and the model owner.`,
    },
  };
}

/** A model_evaluation record with bias metrics and a robustness score (earns the most controls). */
/**
 * @param {number} i
 * @param {RecordOptions} [options]
 */
export function modelEvaluation(i, { occurredAt } = {}) {
  const system = `bench-system-${i % 50}`;
  return {
    record_type: /** @type {const} */ ('model_evaluation'),
    system_name: system,
    identity: `evaluator${i % 5}@example.com`,
    resource: `model-${i % 20}`,
    environment: 'staging',
    ...(occurredAt ? { occurred_at: occurredAt } : {}),
    payload: {
      model_id: `model-${i % 20}`,
      dataset: `holdout-2026-q${(i % 4) + 1}`,
      accuracy: 0.9 + (i % 90) / 1000,
      evaluated_by: `evaluator${i % 5}@example.com`,
      evaluation_type: 'quarterly',
      bias_metrics: { demographic_parity: 0.03, equalised_odds: 0.041, disparate_impact: 0.92 },
      robustness_score: 0.87,
      passed_threshold: true,
      notes: `${FILLER}${FILLER}Evaluation ${i} on the quarterly hold-out set; no regression.`,
    },
  };
}

/** `count` evidence records, alternating the two types. */
/**
 * @param {number} count
 * @param {RecordOptions} [options]
 */
export function evidenceRecords(count, options = {}) {
  return Array.from({ length: count }, (_, i) => (i % 2 === 0 ? riskAssessment(i, options) : modelEvaluation(i, options)));
}

/** The request bodies for the evidence POST load (JSON text, about 1 KiB each). */
export function evidenceBodies(count = 200) {
  const occurredAt = new Date().toISOString();
  return evidenceRecords(count, { occurredAt }).map((record) => Buffer.from(JSON.stringify(record)));
}

/** A random hex SHA-256 (distinct per call). */
export function randomDigest() {
  return createHash('sha256').update(randomBytes(16)).digest('hex');
}

/**
 * `count` distinct attestations for `workspaceId`, each signed with `key` by core's signWitness.
 * @param {typeof import('../../src/core/index.js')} core the built dist/lib/core.js module
 * @param {import('../../src/core/index.js').SigningKey} key
 * @param {string} workspaceId
 * @param {number} count
 */
export function signedAttestations(core, key, workspaceId, count) {
  const base = Date.now();
  const out = new Array(count);
  for (let i = 0; i < count; i += 1) {
    const record = core.buildAttestation({
      systemName: `bench-system-${i % 50}`,
      agentName: 'bench-agent',
      toolName: `tool-${i % 13}`,
      inputHash: randomDigest(),
      outputHash: randomDigest(),
      executedAt: new Date(base - i * 1000).toISOString(),
      modelId: `model-${i % 20}`,
      authorisedBy: { identity: 'ci-bot@example.com', role: 'pipeline', sessionId: `run-${i}` },
    });
    out[i] = { ...record, ...core.signWitness({ ...record }, workspaceId, key) };
  }
  return out;
}
