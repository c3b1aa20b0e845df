/** GET /api/v1/ingestion: what the project's ingestion took and dropped, by type and reason (issue 46). */
import Router from '@koa/router';
import type { AppDeps, AppState } from '../deps.ts';
import { requireSecretKey } from '../middleware/auth.middleware.ts';
import { enumParam } from '../params.ts';

/** The ranges the counts are read over, in hours. */
export const INGESTION_RANGES = { '24h': 24, '14d': 14 * 24 } as const;
export const ingestionRange = (value: unknown) => INGESTION_RANGES[enumParam(value, 'range', Object.keys(INGESTION_RANGES) as (keyof typeof INGESTION_RANGES)[], '24h')];

export function ingestionRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1/ingestion' });
  router.use(requireSecretKey(deps.resolver, { instance: true }));
  router.get('/', async (ctx) => {
    ctx.body = await deps.ingestStats.read(ctx.state.project._id, ingestionRange(ctx.query.range));
  });
  return router;
}
