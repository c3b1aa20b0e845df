/** GET /api/v1/performance, /vitals, /traces/{trace}, /logs (issue 69; secret key and instance, like the issues endpoints). */
import Router from '@koa/router';
import type { AppDeps, AppState } from '../deps.ts';
import { requireSecretKey } from '../middleware/auth.middleware.ts';
import { KEY_WAY_IN } from './project-reads.ts';
import { mountPerformanceReads } from './performance-reads.ts';

export function performanceRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1' });
  // only these paths: the prefix is shared with every other key route
  router.use(['/performance', '/vitals', '/traces', '/logs'], requireSecretKey(deps.resolver, { instance: true }));
  mountPerformanceReads(router, deps, '', KEY_WAY_IN);
  return router;
}
