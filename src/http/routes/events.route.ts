/** POST /api/v1/events (spec 4.5): secret key and instance; 202 {id, duplicate}. */
import Router from '@koa/router';
import { contracted } from '../contract.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { clientGone, readJson } from '../body.ts';
import { requireSecretKey } from '../middleware/auth.middleware.ts';
import { countRejected } from '../middleware/metrics.middleware.ts';

export function eventsRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1' });
  const routes = contracted(router, deps);
  routes.post(
    '/events',
    {
      tag: 'events',
      summary: 'Report a sign-in attempt or an error event (spec 4.5)',
      auth: 'secret+instance',
      // An event is stored as one (compressed) value, so its keys are not checked as a stored document's would be;
      // one that breaks a rule is repaired where it can be (src/services/events.service.ts prepareEvent).
      body: { schema: 'event', checkedBy: 'events.accept' },
      ok: { 202: { description: 'stored, or (`filtered`) dropped by one of the project\'s inbound filters', schema: 'event-accepted' } },
      errors: [400, 413, 415, 429, 503],
    },
    countRejected(deps.metrics, 'event'),
    requireSecretKey(deps.resolver, { instance: true }),
    async (ctx) => {
      const raw = await readJson(ctx, deps.config.bodyLimitBytes, ['application/json'], false);
      const receivedBytes = Number(ctx.get('content-length')) || undefined;
      ctx.status = 202;
      ctx.body = await deps.events.accept(ctx.state.project, raw, { now: new Date(), clientIp: ctx.ip, receivedBytes, gone: clientGone(ctx) });
    },
  );
  return router;
}
