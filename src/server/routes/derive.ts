/** POST grc/derive-controls (spec §4.9, wire.md §3): core's deterministic recommender. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { deriveControls, isRiskTier, RISK_TIERS, type ValidationIssue } from '../../core/index.js';
import { validationFailed } from '../errors.js';
import { bodyObject } from '../json-body.js';
import { WORKSPACE_PREFIX } from './deps.js';

/** Longest description read; beyond it the text is refused rather than scanned. */
export const MAX_DESCRIPTION_LENGTH = 10_000;

export function registerDeriveRoutes(app: FastifyInstance): void {
  app.post(`${WORKSPACE_PREFIX}/grc/derive-controls`, async (request: FastifyRequest) => {
    const body = bodyObject(request);
    const issues: ValidationIssue[] = [];
    const { description, risk_tier: riskTier } = body;
    if (description === undefined || description === null) issues.push({ path: 'description', code: 'required', message: 'is required' });
    else if (typeof description !== 'string') issues.push({ path: 'description', code: 'type', message: 'must be a string' });
    else if (description.length > MAX_DESCRIPTION_LENGTH) issues.push({ path: 'description', code: 'range', message: `must be at most ${MAX_DESCRIPTION_LENGTH} characters` });
    if (riskTier === undefined || riskTier === null) issues.push({ path: 'risk_tier', code: 'required', message: 'is required' });
    else if (!isRiskTier(riskTier)) issues.push({ path: 'risk_tier', code: 'enum', message: `must be one of: ${RISK_TIERS.join(', ')}` });
    if (issues.length > 0) throw validationFailed(issues);
    return { recommendations: deriveControls(description as string, riskTier as string) };
  });
}
