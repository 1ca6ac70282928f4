/**
 * Posture brief, systems and gates (spec §4.6–§4.8, wire.md §3), scored by core/controls from
 * the per-workspace tables kept current at write time: one small read each, no evidence scan.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { coverageByFramework, DAY_MS, failingGateFrameworks, gatesFrom, scoresFrom } from '../../core/index.js';
import { authOf } from '../auth.js';
import { textParam, type Query } from '../query.js';
import { isoFromMs, WORKSPACE_PREFIX, type RouteDeps } from './deps.js';

export function registerPostureRoutes(app: FastifyInstance, { store, nowMs }: RouteDeps): void {
  app.get(`${WORKSPACE_PREFIX}/grc/posture-brief`, async (request: FastifyRequest) => {
    const { workspaceId } = authOf(request);
    const now = nowMs();
    // One coverage pass feeds both the scores and the gates.
    const byFramework = coverageByFramework(store.coverage.lastEarned(workspaceId), now);
    const scores = scoresFrom(byFramework);
    const gates = gatesFrom(byFramework, store.gatePolicy.policy(workspaceId));
    return {
      overall_pct: scores.overall_pct,
      frameworks: scores.frameworks,
      failing_gates: failingGateFrameworks(gates),
      unattested_24h: store.systems.countUnattestedSince(workspaceId, now - DAY_MS),
    };
  });

  app.get(`${WORKSPACE_PREFIX}/grc/systems`, async (request: FastifyRequest) => {
    const { workspaceId } = authOf(request);
    const name = textParam(request.query as Query, 'name', 256);
    const systems = store.systems.list(workspaceId, name).map((row) => ({
      system_id: row.system_id,
      system_name: row.name,
      registered: row.registered === 1,
      risk_tier: row.risk_tier,
      last_evidence_at: isoFromMs(row.last_evidence_ms),
    }));
    return { systems };
  });

  app.get(`${WORKSPACE_PREFIX}/grc/gates/check`, async (request: FastifyRequest) => {
    const { workspaceId } = authOf(request);
    const byFramework = coverageByFramework(store.coverage.lastEarned(workspaceId), nowMs());
    return { gates: gatesFrom(byFramework, store.gatePolicy.policy(workspaceId)) };
  });
}
