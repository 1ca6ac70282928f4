/** GET /api/me (spec §4.1): the identity behind the API key. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authOf } from '../auth.js';

export function registerIdentityRoutes(app: FastifyInstance): void {
  app.get('/api/me', async (request: FastifyRequest) => {
    const auth = authOf(request);
    return { user_id: auth.userId, workspace_id: auth.workspaceId, org_id: auth.orgId };
  });
}
