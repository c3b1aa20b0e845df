/** GET /metrics: Prometheus text for every live Lookout process (src/metrics/fleet.ts). */
import Router from '@koa/router';
import type { AppDeps, AppState } from '../deps.ts';

export function metricsRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/metrics', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.type = deps.scrape.contentType;
    ctx.body = await deps.scrape.text();
  });
  return router;
}
