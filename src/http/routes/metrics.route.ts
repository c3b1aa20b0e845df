/** GET /metrics: Prometheus text for every live Lookout process (src/metrics/fleet.ts). */
import Router from '@koa/router';
import { contracted } from '../contract.ts';
import type { AppDeps, AppState } from '../deps.ts';

export function metricsRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>();
  const routes = contracted(router, deps);
  routes.get(
    '/metrics',
    { tag: 'operations', summary: 'Prometheus metrics of every live Lookout process', auth: 'none', ok: { 200: { description: 'the Prometheus text format', media: 'text/plain; version=0.0.4; charset=utf-8' } } },
    async (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.type = deps.scrape.contentType;
      ctx.body = await deps.scrape.text();
    },
  );
  return router;
}
