/**
 * GET /issues, GET /issues/:id, POST /issues/:id/status (spec 4.6–4.8), and an issue's events and feedback, with
 * an installation's secret key (src/http/routes/issue-routes.ts mounts them).
 */
import Router from '@koa/router';
import type { AppDeps, AppState } from '../deps.ts';
import { requireSecretKey } from '../middleware/auth.middleware.ts';
import { mountIssueRoutes } from './issue-routes.ts';

export function issuesRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1/issues' });
  router.use(requireSecretKey(deps.resolver, { instance: true }));

  mountIssueRoutes(router, deps, '', { auth: 'secret+instance', params: [], projectOf: async (ctx) => (ctx.state as AppState).project._id });
  return router;
}
