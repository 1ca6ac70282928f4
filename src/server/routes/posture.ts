/**
 * Posture brief, readiness, systems, gate policies and gates (spec §4.6–§4.8, wire.md §3), scored
 * by core/controls from the per-workspace tables kept current at write time: one small read each,
 * no evidence scan. Members beyond the specification's (docs/service.md, "Extensions") are what
 * existing clients of this kind of service read; the specification's members are unchanged.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  coverageByFramework,
  DAY_MS,
  DEFAULT_GATE_POLICY,
  failingGateFrameworks,
  gateId,
  gatePolicySources,
  gatesFrom,
  scoresFrom,
  type FrameworkCoverage,
  type Gate,
  type GatePolicy,
} from '../../core/index.js';
import { authOf } from '../auth.js';
import { textParam, type Query } from '../query.js';
import { policyOf } from '../store/gate-policy-log.js';
import type { Store } from '../store/store.js';
import { isoFromMs, WORKSPACE_PREFIX, type RouteDeps } from './deps.js';

/**
 * Each gate as the extension lists show it: the policy and where the framework stands. `gates` is
 * core's judgement of `byFramework` (same order), so pass or fail is decided in one place.
 */
function gateStatuses(byFramework: readonly FrameworkCoverage[], gates: readonly Gate[], policy: GatePolicy) {
  return byFramework.map((entry, index) => ({
    framework: entry.framework,
    mode: (policy[entry.framework] ?? DEFAULT_GATE_POLICY[entry.framework]).mode,
    threshold_pct: (policy[entry.framework] ?? DEFAULT_GATE_POLICY[entry.framework]).threshold,
    current_pct: entry.score_pct,
    status: gates[index].passing ? ('passing' as const) : ('failing' as const),
  }));
}

/** `passed`: false when any blocking gate fails (advisory gates never fail the check). */
function allBlockingPass(gates: readonly Gate[]): boolean {
  return gates.every((gate) => gate.passing || !gate.blocking);
}

/** The coverage of every framework now, and the workspace's gate policy. */
async function standing(store: Store, workspaceId: string, nowMs: number) {
  // The policy in force is the latest logged change's (docs/ledger.md), never a row the log does not hold.
  const [lastEarned, latest] = await Promise.all([store.lastEarned(workspaceId), store.gatePolicy.latest(workspaceId, nowMs)]);
  return { byFramework: coverageByFramework(lastEarned, nowMs), policy: policyOf(latest) };
}

/** Each gate as `GET grc/gates` lists it: the rule in force, where the framework stands, and whether the workspace set it. */
export async function gateListing(store: Store, workspaceId: string, nowMs: number) {
  const { byFramework, policy } = await standing(store, workspaceId, nowMs);
  const sources = gatePolicySources(await store.gatePolicy.changes(workspaceId, nowMs));
  return gateStatuses(byFramework, gatesFrom(byFramework, policy), policy).map((status) => ({
    id: gateId(status.framework),
    ...status,
    scope: 'workspace',
    source: sources[status.framework],
  }));
}

export function registerPostureRoutes(app: FastifyInstance, { store, nowMs }: RouteDeps): void {
  const standingOf = (workspaceId: string) => standing(store, workspaceId, nowMs());

  app.get(`${WORKSPACE_PREFIX}/grc/posture-brief`, async (request: FastifyRequest) => {
    const { workspaceId } = authOf(request);
    // One coverage pass feeds both the scores and the gates.
    const { byFramework, policy } = await standingOf(workspaceId);
    const scores = scoresFrom(byFramework);
    const gates = gatesFrom(byFramework, policy);
    return {
      overall_pct: scores.overall_pct,
      frameworks: scores.frameworks,
      failing_gates: failingGateFrameworks(gates),
      unattested_24h: await store.systems.countUnattestedSince(workspaceId, nowMs() - DAY_MS),
    };
  });

  // Extension: the scores with the control counts behind them.
  app.get(`${WORKSPACE_PREFIX}/grc/readiness`, async (request: FastifyRequest) => {
    const { byFramework } = await standingOf(authOf(request).workspaceId);
    return {
      overall_pct: scoresFrom(byFramework).overall_pct,
      frameworks: byFramework.map((entry) => ({
        framework: entry.framework,
        score_pct: entry.score_pct,
        controls_required: entry.required,
        controls_covered: entry.covered,
      })),
    };
  });

  app.get(`${WORKSPACE_PREFIX}/grc/systems`, async (request: FastifyRequest) => {
    const { workspaceId } = authOf(request);
    const query = request.query as Query;
    // `system_name` is accepted as another name of the specification's `name` filter.
    const name = textParam(query, 'name', 256) ?? textParam(query, 'system_name', 256);
    const systems = (await store.systems.list(workspaceId, name)).map((row) => {
      const lastSeenMs = row.last_attested_ms === null ? row.last_evidence_ms : Math.max(row.last_evidence_ms, row.last_attested_ms);
      return {
        system_id: row.system_id,
        system_name: row.name,
        registered: row.registered === 1,
        risk_tier: row.risk_tier,
        last_evidence_at: isoFromMs(row.last_evidence_ms),
        // extensions
        is_registered: row.registered === 1,
        last_seen: isoFromMs(lastSeenMs),
        record_count: row.record_count,
        record_types: JSON.parse(row.record_types) as string[],
        controls: JSON.parse(row.controls) as string[],
      };
    });
    return { systems, total: systems.length };
  });

  // Extension: the gate policy in effect (changing it: `govctl admin gates set`, or an admin key's PUT, gate-policy.ts).
  app.get(`${WORKSPACE_PREFIX}/grc/gates`, async (request: FastifyRequest) => ({
    policies: await gateListing(store, authOf(request).workspaceId, nowMs()),
    // Every framework has a gate in effect (the defaults are a policy too): none is unconfigured.
    unconfigured_frameworks: [],
  }));

  app.get(`${WORKSPACE_PREFIX}/grc/gates/check`, async (request: FastifyRequest) => {
    const { byFramework, policy } = await standingOf(authOf(request).workspaceId);
    const gates = gatesFrom(byFramework, policy);
    return {
      gates,
      // extensions
      passed: allBlockingPass(gates),
      results: gateStatuses(byFramework, gates, policy),
    };
  });
}
