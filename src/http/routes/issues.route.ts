/**
 * GET /issues, GET /issues/:id, POST /issues/:id/status (spec 4.6–4.8), and an issue's events and feedback, with
 * an installation's secret key (src/http/routes/project-reads.ts mounts them).
 */
import Router from '@koa/router';
import type { AppDeps, AppState } from '../deps.ts';
import { requireSecretKey } from '../middleware/auth.middleware.ts';
import { KEY_WAY_IN, mountIssueRoutes } from './project-reads.ts';

export function issuesRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1/issues' });
  router.use(requireSecretKey(deps.resolver, { instance: true }));

  mountIssueRoutes(router, deps, '', KEY_WAY_IN);
  return router;
}
