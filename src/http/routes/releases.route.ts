/** GET /releases, GET /releases/:release (the Releases page; secret key and instance, like the issues endpoints). */
import Router from '@koa/router';
import { contracted } from '../contract.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { requireSecretKey } from '../middleware/auth.middleware.ts';
import { PARAMS } from '../params.ts';
import { KEY_WAY_IN, mountReleaseList } from './project-reads.ts';

export function releasesRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1/releases' });
  router.use(requireSecretKey(deps.resolver, { instance: true }));
  const routes = contracted(router, deps);

  mountReleaseList(router, deps, '', KEY_WAY_IN);
  routes.get(
    '/:release',
    {
      tag: 'releases',
      summary: "One release's health with its hourly series",
      auth: 'secret+instance',
      params: [PARAMS.release],
      query: 'release-query',
      ok: { 200: { description: 'the release and its hourly `series`', schema: 'release-page' } },
      errors: [400, 404],
    },
    async (ctx, { params, query }) => {
      ctx.body = await deps.releases.get(ctx.state.project._id, params.release, query.environment, new Date());
    },
  );
  return router;
}
