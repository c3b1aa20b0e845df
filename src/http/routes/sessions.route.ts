/**
 * POST /api/v1/sessions (spec 4.4): public key in X-Service-Key or `?key=`
 * (beacons), JSON or text/plain (navigator.sendBeacon), CORS for any origin,
 * 3,000 requests per minute per key. 202 {accepted, skipped}.
 */
import Router from '@koa/router';
import { contracted } from '../contract.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { clientGone, readJson } from '../body.ts';
import { authenticate, serviceKey } from '../middleware/auth.middleware.ts';
import { corsMiddleware } from '../middleware/cors.middleware.ts';
import { countRejected } from '../middleware/metrics.middleware.ts';

export const SESSION_MEDIA_TYPES = ['application/json', 'text/plain'] as const;

export function sessionsRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1' });
  const routes = contracted(router, deps);
  routes.preflight(
    '/sessions',
    { tag: 'sessions', summary: 'CORS preflight: any origin may post sessions with the public key', auth: 'none', ok: { 204: 'CORS headers' } },
    corsMiddleware(),
  );
  routes.post(
    '/sessions',
    {
      tag: 'sessions',
      summary: 'Report sessions: one, a batch of up to 100, or aggregates (spec 4.4)',
      auth: 'public',
      // each entry is checked on its own by the sessions service: a bad one is skipped, not the whole request
      body: { schema: 'sessions', mediaTypes: SESSION_MEDIA_TYPES, checkedBy: 'sessions.accept' },
      ok: { 202: { description: 'sessions stored durably; entries skipped, the first ten named with why', schema: 'sessions-accepted' } },
      errors: [400, 413, 415, 429, 503],
    },
    countRejected(deps.metrics, 'session'),
    async (ctx, next) => {
      ctx.state.project = (await authenticate(deps.resolver, serviceKey(ctx), 'public')).project;
      await next();
    },
    deps.rateLimit((ctx) => serviceKey(ctx)!),
    async (ctx) => {
      const body = await readJson(ctx, deps.config.bodyLimitBytes, SESSION_MEDIA_TYPES);
      ctx.status = 202;
      ctx.body = await deps.sessions.accept(ctx.state.project, body, { now: new Date(), gone: clientGone(ctx) });
    },
  );
  return router;
}
