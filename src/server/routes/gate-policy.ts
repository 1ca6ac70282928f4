/**
 * The gate policy as logged (docs/service.md, "Extensions"; docs/ledger.md, "Gate policy
 * changes"): `GET …/grc/gates/policy` answers the policy in force and every logged change, oldest
 * first, so that an auditor can check each change against its `gate_policy` leaf. An admin key
 * may change the policy (docs/security.md, "API key roles") with the calls the hosted service's
 * clients make for `mima gates set|unset`: `PUT …/grc/gates` `{framework, mode, threshold_pct,
 * scope}` and `DELETE …/grc/gates/{id}` (the `id` the listing gives, `gate_<framework>`, or the
 * framework itself). Each change is logged with the key's user as `changed_by`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  FRAMEWORKS,
  GATE_MODES,
  gateFramework,
  isJsonNumber,
  jsonNumberValue,
  type Framework,
  type GateMode,
  type GatePolicyEdit,
  type ValidationIssue,
} from '../../core/index.js';
import { authOf } from '../auth.js';
import { notFound, validationFailed } from '../errors.js';
import { bodyObject } from '../json-body.js';
import type { Store } from '../store/store.js';
import { WORKSPACE_PREFIX, type RouteDeps } from './deps.js';
import { gateListing } from './posture.js';

const PUT_MEMBERS = ['framework', 'mode', 'threshold_pct', 'scope'];

/** The set a PUT body asks for. @throws HttpError 422 naming every problem */
function setOf(body: Record<string, unknown>): { framework: Framework; rule: { mode?: GateMode; threshold?: number } } {
  const issues: ValidationIssue[] = [];
  for (const key of Object.keys(body)) {
    if (!PUT_MEMBERS.includes(key)) issues.push({ path: key, code: 'rule', message: `is not a member of a gate (expected ${PUT_MEMBERS.join(', ')})` });
  }
  const { framework, mode, scope } = body;
  // a number as read without loss (80.0 is a float there): its value
  const threshold = isJsonNumber(body.threshold_pct) ? jsonNumberValue(body.threshold_pct) : body.threshold_pct;
  if (framework === undefined) issues.push({ path: 'framework', code: 'required', message: 'is required' });
  else if (typeof framework !== 'string' || !FRAMEWORKS.includes(framework as Framework))
    issues.push({ path: 'framework', code: 'enum', message: `must be one of: ${FRAMEWORKS.join(', ')}` });
  if (mode !== undefined && !GATE_MODES.includes(mode as GateMode))
    issues.push({ path: 'mode', code: 'enum', message: `must be one of: ${GATE_MODES.join(', ')}` });
  if (threshold !== undefined && (typeof threshold !== 'number' || threshold < 0 || threshold > 100))
    issues.push({ path: 'threshold_pct', code: 'range', message: 'must be a number from 0 to 100' });
  if (mode === undefined && threshold === undefined) issues.push({ path: 'mode', code: 'required', message: 'or threshold_pct is required' });
  // Gates are per workspace: a system's own gate (another scope) is not kept.
  if (scope !== undefined && scope !== 'workspace')
    issues.push({ path: 'scope', code: 'enum', message: 'must be workspace (gates are per workspace, not per system)' });
  if (issues.length > 0) throw validationFailed(issues);
  return {
    framework: framework as Framework,
    rule: { ...(mode !== undefined ? { mode: mode as GateMode } : {}), ...(threshold !== undefined ? { threshold: threshold as number } : {}) },
  };
}

/** Logs a change and answers the changed framework's gate as the listing shows it, with the change. */
async function change(store: Store, workspaceId: string, framework: Framework, edit: GatePolicyEdit, nowMs: number) {
  const logged = await store.gatePolicy.change(workspaceId, edit, nowMs);
  if (logged === null) throw notFound('workspace not found');
  const gate = (await gateListing(store, workspaceId, nowMs)).find((entry) => entry.framework === framework)!;
  return { ...gate, change: logged };
}

export function registerGatePolicyRoutes(app: FastifyInstance, { store, nowMs }: RouteDeps): void {
  app.get(`${WORKSPACE_PREFIX}/grc/gates/policy`, async (request: FastifyRequest) => {
    const changes = await store.gatePolicy.changes(authOf(request).workspaceId, nowMs());
    return { policy: changes[changes.length - 1].policy, changes };
  });

  app.put(`${WORKSPACE_PREFIX}/grc/gates`, { config: { access: 'admin' } }, async (request: FastifyRequest) => {
    const { workspaceId, userId } = authOf(request);
    const { framework, rule } = setOf(bodyObject(request));
    return change(store, workspaceId, framework, { action: 'set', changedBy: userId, framework, rule }, nowMs());
  });

  app.delete(`${WORKSPACE_PREFIX}/grc/gates/:gate_id`, { config: { access: 'admin' } }, async (request: FastifyRequest) => {
    const { workspaceId, userId } = authOf(request);
    const { gate_id: id } = request.params as { gate_id: string };
    const framework = gateFramework(id) ?? (FRAMEWORKS.includes(id as Framework) ? (id as Framework) : undefined);
    if (framework === undefined) throw notFound(`no gate ${id}: a gate is gate_<framework> (${FRAMEWORKS.join(', ')})`);
    return change(store, workspaceId, framework, { action: 'unset', changedBy: userId, framework }, nowMs());
  });
}
