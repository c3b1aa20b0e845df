/**
 * Probes for orchestrators and load balancers. `/healthz`: the process is
 * alive and serving. `/readyz`: Redis and MongoDB answer, and the process is
 * not shutting down; otherwise 503 naming what failed, so a load balancer
 * stops sending traffic before in-flight requests are drained.
 */
import Router from '@koa/router';
import { contracted } from '../contract.ts';
import type { AppDeps, AppState } from '../deps.ts';

export function healthRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>();
  const routes = contracted(router, deps);
  routes.get('/healthz', { tag: 'operations', summary: 'Liveness: the process is up and serving', auth: 'none', ok: { 200: { description: 'the process is up', schema: 'alive' } } }, (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ok' };
  });
  routes.get(
    '/readyz',
    {
      tag: 'operations',
      summary: 'Readiness: Redis and MongoDB answer and the process is not shutting down',
      auth: 'none',
      ok: {
        200: { description: '`ready`, or `degraded` (`redis_full`) while Redis is at its maxmemory (ingestion still acknowledged)', schema: 'ready' },
      },
      errors: [503],
    },
    async (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      if (deps.lifecycle.stopping) {
        ctx.status = 503;
        ctx.body = { reason: 'shutting_down', message: 'this process is shutting down and takes no new work', failing: [] };
        return;
      }
      const { ready, checks, redisFull } = await deps.health.readiness();
      if (ready && redisFull) {
        // Still ready: ingestion is acknowledged and kept in MongoDB. A 503 would take every API process out of the
        // load balancer at once and turn a processing delay into an outage (docs/decisions.md).
        ctx.body = {
          status: 'degraded',
          reason: 'redis_full',
          message: `Redis is at its maxmemory (${redisFull.used} of ${redisFull.max} bytes used) and refuses writes: events and sessions are acknowledged and stored, and processed once memory is freed or maxmemory raised`,
          redis_memory: { used_bytes: redisFull.used, max_bytes: redisFull.max },
          checks,
        };
        return;
      }
      if (ready) {
        ctx.body = { status: 'ready', checks };
        return;
      }
      const failing = Object.entries(checks)
        .filter(([, state]) => state !== 'ok')
        .map(([store]) => store);
      ctx.status = 503;
      ctx.body = { reason: 'store_unavailable', message: `not ready: ${failing.join(' and ')} did not answer`, failing, checks };
    },
  );
  return router;
}
