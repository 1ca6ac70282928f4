/** GET /api/me (spec §4.1): the identity behind the API key. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authOf } from '../auth.js';

/**
 * GET /api/health (extension): `{"status": "ok"}` for load balancers and existing clients. It needs
 * no API key and says nothing about the data (docs/service.md): registered outside the
 * authenticated scope.
 */
export function registerHealthRoute(app: FastifyInstance): void {
  app.get('/api/health', async () => ({ status: 'ok' }));
}

export function registerIdentityRoutes(app: FastifyInstance): void {
  app.get('/api/me', async (request: FastifyRequest) => {
    const auth = authOf(request);
    return { user_id: auth.userId, workspace_id: auth.workspaceId, org_id: auth.orgId };
  });
}
