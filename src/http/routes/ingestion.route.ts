/** GET /api/v1/ingestion: what the project's ingestion took and dropped, by type and reason (issue 46). */
import Router from '@koa/router';
import type { AppDeps, AppState } from '../deps.ts';
import { requireSecretKey } from '../middleware/auth.middleware.ts';

/** The ranges the counts are read over, in hours (schemas/ingestion-query.json names them). */
const INGESTION_RANGES = { '24h': 24, '14d': 14 * 24 } as const;
export const ingestionRange = (deps: Pick<AppDeps, 'validator'>, q: Record<string, unknown>) =>
  INGESTION_RANGES[deps.validator.query<{ range: keyof typeof INGESTION_RANGES }>('ingestion-query', q).range];

export function ingestionRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1/ingestion' });
  router.use(requireSecretKey(deps.resolver, { instance: true }));
  router.get('/', async (ctx) => {
    ctx.body = await deps.ingestStats.read(ctx.state.project._id, ingestionRange(deps, ctx.query));
  });
  return router;
}
