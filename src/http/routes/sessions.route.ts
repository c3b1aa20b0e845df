/**
 * POST /api/v1/sessions (spec 4.4): public key in X-Service-Key or `?key=`
 * (beacons), JSON or text/plain (navigator.sendBeacon), CORS for any origin,
 * 3,000 requests per minute per key. 202 {accepted, skipped}.
 */
import Router from '@koa/router';
import type { AppDeps, AppState } from '../deps.ts';
import { readJson } from '../body.ts';
import { authenticate } from '../middleware/auth.middleware.ts';
import { corsMiddleware } from '../middleware/cors.middleware.ts';
import { countRejected } from '../middleware/metrics.middleware.ts';

export const SESSION_MEDIA_TYPES = ['application/json', 'text/plain'] as const;

export function sessionsRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1' });
  const keyOf = (ctx: { get(h: string): string; query: Record<string, unknown> }) =>
    ctx.get('x-service-key') || (typeof ctx.query.key === 'string' ? ctx.query.key : '') || undefined;

  router.all('/sessions', corsMiddleware());
  router.post(
    '/sessions',
    countRejected(deps.metrics, 'session'),
    async (ctx, next) => {
      ctx.state.project = (await authenticate(deps.resolver, keyOf(ctx), 'public')).project;
      await next();
    },
    deps.rateLimit((ctx) => keyOf(ctx)!),
    async (ctx) => {
      const project = ctx.state.project._id;
      const read = deps.sessions.read(project, await readJson(ctx, deps.config.bodyLimitBytes, SESSION_MEDIA_TYPES), new Date());
      ctx.status = 202;
      ctx.body = await deps.sessions.ingest(project, read);
    },
  );
  return router;
}
