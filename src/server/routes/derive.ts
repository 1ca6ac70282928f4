/**
 * POST grc/derive-controls (spec §4.9, wire.md §3): core's deterministic recommender, and, as
 * extensions existing clients read (docs/service.md), where the workspace stands against the
 * required controls of the recommended record types.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { controlById, coverageByFramework, deriveControls, isRiskTier, RISK_TIERS, type ValidationIssue } from '../../core/index.js';
import { authOf } from '../auth.js';
import { validationFailed } from '../errors.js';
import { bodyObject } from '../json-body.js';
import { WORKSPACE_PREFIX, type RouteDeps } from './deps.js';

/** Longest description read; beyond it the text is refused rather than scanned. */
export const MAX_DESCRIPTION_LENGTH = 10_000;

/** The body member of the specification's name, or of another client's name for it. */
function member(body: Record<string, unknown>, name: string, alias: string): unknown {
  return body[name] ?? body[alias];
}

export function registerDeriveRoutes(app: FastifyInstance, { store, nowMs }: RouteDeps): void {
  // Stores nothing: a reader key may ask too.
  app.post(`${WORKSPACE_PREFIX}/grc/derive-controls`, { config: { access: 'read' } }, async (request: FastifyRequest) => {
    const { workspaceId } = authOf(request);
    const body = bodyObject(request);
    const issues: ValidationIssue[] = [];
    const description = member(body, 'description', 'action_description');
    const systemName = body.system_name;
    if (systemName !== undefined && typeof systemName !== 'string') issues.push({ path: 'system_name', code: 'type', message: 'must be a string' });
    // The named system's registered risk tier, when it has one.
    const system = typeof systemName === 'string' && systemName !== '' ? await store.systems.get(workspaceId, systemName) : undefined;
    const systemRiskTier = system?.risk_tier ?? null;
    const riskTier = member(body, 'risk_tier', 'ai_risk_tier') ?? systemRiskTier ?? undefined;
    if (description === undefined || description === null) issues.push({ path: 'description', code: 'required', message: 'is required' });
    else if (typeof description !== 'string') issues.push({ path: 'description', code: 'type', message: 'must be a string' });
    else if (description.length > MAX_DESCRIPTION_LENGTH)
      issues.push({ path: 'description', code: 'range', message: `must be at most ${MAX_DESCRIPTION_LENGTH} characters` });
    if (riskTier === undefined || riskTier === null)
      issues.push({ path: 'risk_tier', code: 'required', message: 'is required (or name a registered system in system_name)' });
    else if (!isRiskTier(riskTier)) issues.push({ path: 'risk_tier', code: 'enum', message: `must be one of: ${RISK_TIERS.join(', ')}` });
    if (issues.length > 0) throw validationFailed(issues);

    const recommendations = deriveControls(description as string, riskTier as string);
    // Required controls the recommended record types can earn, covered now or not.
    const earnable = new Set(recommendations.flatMap((entry) => entry.controls));
    const covered: string[] = [];
    const uncovered: { control_id: string; framework: string; record_types: string[] }[] = [];
    for (const framework of coverageByFramework(await store.lastEarned(workspaceId), nowMs())) {
      const missing = new Map(framework.missing.map((entry) => [entry.control_id, entry]));
      for (const controlId of earnable) {
        const control = controlById(controlId);
        if (!control || !control.required || control.framework !== framework.framework) continue;
        const gap = missing.get(controlId);
        if (gap === undefined) covered.push(controlId);
        else
          uncovered.push({
            control_id: controlId,
            framework: framework.framework,
            record_types: [...new Set(gap.evidenced_by.map((rule) => rule.record_type))].sort(),
          });
      }
    }
    covered.sort();
    uncovered.sort((a, b) => (a.control_id < b.control_id ? -1 : a.control_id > b.control_id ? 1 : 0));
    return {
      recommendations,
      // extensions
      system_risk_tier: systemRiskTier,
      uncovered_required_controls: uncovered,
      covered_control_ids: covered,
      total_required: covered.length + uncovered.length,
      total_covered: covered.length,
    };
  });
}
