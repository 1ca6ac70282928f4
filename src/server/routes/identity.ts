/** GET /api/me (docs/service.md "GET /api/me"): the identity behind the API key. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authOf } from '../auth.js';
import type { Store } from '../store/store.js';

/**
 * GET /api/health (extension): `{"status": "ok"}` for load balancers and existing clients. It needs
 * no API key and says nothing about the data (docs/service.md): registered outside the
 * authenticated scope.
 */
export function registerHealthRoute(app: FastifyInstance, store: Store): void {
  app.get('/api/health', async () => ({ status: 'ok' }));
  // GET /api/ready (extension): whether this replica can serve requests now, i.e. its database
  // answers. A balancer takes a replica out while this is 503 (docs/deploy.md); liveness stays
  // /api/health, so a database outage does not make every replica restart.
  app.get('/api/ready', async (_request, reply) => {
    let ready = false;
    try {
      ready = await store.ready();
    } catch {
      ready = false;
    }
    if (!ready) return reply.code(503).send({ status: 'unavailable' });
    return { status: 'ready' };
  });
}

export function registerIdentityRoutes(app: FastifyInstance): void {
  app.get('/api/me', async (request: FastifyRequest) => {
    const auth = authOf(request);
    return { user_id: auth.userId, workspace_id: auth.workspaceId, org_id: auth.orgId };
  });
}
