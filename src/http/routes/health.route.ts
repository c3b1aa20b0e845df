/**
 * Probes for orchestrators and load balancers. `/healthz`: the process is
 * alive and serving. `/readyz`: Redis and MongoDB answer, and the process is
 * not shutting down; otherwise 503 naming what failed, so a load balancer
 * stops sending traffic before in-flight requests are drained.
 */
import Router from '@koa/router';
import type { AppDeps, AppState } from '../app.ts';

export function healthRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/healthz', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    if (deps.lifecycle.stopping) {
      ctx.status = 503;
      ctx.body = { reason: 'shutting_down', message: 'this process is shutting down and takes no new work', failing: [] };
      return;
    }
    const { ready, checks } = await deps.health.readiness();
    if (ready) {
      ctx.body = { status: 'ready', checks };
      return;
    }
    const failing = Object.entries(checks).filter(([, state]) => state !== 'ok').map(([store]) => store);
    ctx.status = 503;
    ctx.body = { reason: 'store_unavailable', message: `not ready: ${failing.join(' and ')} did not answer`, failing, checks };
  });
  return router;
}
