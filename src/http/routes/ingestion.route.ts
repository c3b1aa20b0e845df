/** GET /api/v1/ingestion: what the project's ingestion took and dropped, by type and reason (issue 46). */
import Router from '@koa/router';
import { contracted } from '../contract.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { requireSecretKey } from '../middleware/auth.middleware.ts';

/** The ranges the counts are read over, in hours (schemas/ingestion-query.json names them). */
export const INGESTION_HOURS = { '24h': 24, '14d': 14 * 24 } as const;

export function ingestionRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1/ingestion' });
  router.use(requireSecretKey(deps.resolver, { instance: true }));
  const routes = contracted(router, deps);
  routes.get(
    '/',
    {
      tag: 'events',
      summary: "What the project's ingestion accepted and dropped (not stored), by item type and reason, with hourly totals",
      auth: 'secret+instance',
      query: 'ingestion-query',
      ok: { 200: { description: 'counts by type and reason, and by hour', schema: 'ingestion' } },
      errors: [400],
    },
    async (ctx, { query }) => {
      ctx.body = await deps.ingestStats.read(ctx.state.project._id, INGESTION_HOURS[query.range]);
    },
  );
  return router;
}
