/** GET /api/v1/ingestion: what the project's ingestion took and dropped, by type and reason (issue 46). */
import Router from '@koa/router';
import type { AppDeps, AppState } from '../deps.ts';
import { requireSecretKey } from '../middleware/auth.middleware.ts';
import { KEY_WAY_IN, mountIngestionRead } from './project-reads.ts';

export function ingestionRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1/ingestion' });
  router.use(requireSecretKey(deps.resolver, { instance: true }));
  mountIngestionRead(router, deps, '', KEY_WAY_IN);
  return router;
}
