/**
 * The gate policy as logged (docs/service.md, "Extensions"; docs/ledger.md, "Gate policy
 * changes"): `GET …/grc/gates/policy` answers the policy in force and every logged change, oldest
 * first, so that an auditor can check each change against its `gate_policy` leaf.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authOf } from '../auth.js';
import { WORKSPACE_PREFIX, type RouteDeps } from './deps.js';

export function registerGatePolicyRoutes(app: FastifyInstance, { store, nowMs }: RouteDeps): void {
  app.get(`${WORKSPACE_PREFIX}/grc/gates/policy`, async (request: FastifyRequest) => {
    const changes = await store.gatePolicy.changes(authOf(request).workspaceId, nowMs());
    return { policy: changes[changes.length - 1].policy, changes };
  });
}
