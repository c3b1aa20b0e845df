/** GET /releases, GET /releases/:release (the Releases page; secret key and instance, like the issues endpoints). */
import Router from '@koa/router';
import type { AppDeps, AppState } from '../deps.ts';
import { requireSecretKey } from '../middleware/auth.middleware.ts';
import { releaseParam } from '../params.ts';

/** The environment of a release list or page (schemas/release-query.json). */
export const releaseQuery = (deps: Pick<AppDeps, 'validator'>, q: Record<string, unknown>) => deps.validator.query<{ environment?: string }>('release-query', q);

export function releasesRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1/releases' });
  router.use(requireSecretKey(deps.resolver, { instance: true }));

  router.get('/', async (ctx) => {
    ctx.body = await deps.releases.list(ctx.state.project._id, releaseQuery(deps, ctx.query).environment, new Date());
  });

  router.get('/:release', async (ctx) => {
    ctx.body = await deps.releases.get(ctx.state.project._id, releaseParam(ctx.params.release), releaseQuery(deps, ctx.query).environment, new Date());
  });
  return router;
}
