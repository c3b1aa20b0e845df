/** POST /api/v1/events (spec 4.5): secret key and instance; 202 {id, duplicate}. */
import Router from '@koa/router';
import { prepareEvent } from '../../services/events.service.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { readJson } from '../body.ts';
import { requireSecretKey } from '../middleware/auth.middleware.ts';
import { countRejected } from '../middleware/metrics.middleware.ts';

export function eventsRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1' });
  router.post('/events', countRejected(deps.metrics, 'event'), requireSecretKey(deps.resolver, { instance: true }), async (ctx) => {
    // An event is stored as one (compressed) value, so its keys are not checked as a stored document's would be.
    const raw = await readJson(ctx, deps.config.bodyLimitBytes, ['application/json'], false);
    const body = prepareEvent(deps.validator, raw, { now: new Date(), clientIp: ctx.ip, receivedBytes: Number(ctx.get('content-length')) || undefined });
    ctx.status = 202;
    ctx.body = await deps.events.ingest(ctx.state.project, body, new Date());
  });
  return router;
}
