/**
 * Request metrics. Durations are labelled with the route pattern that
 * matched (`/api/v1/issues/:id`), never the raw path, so ids and hostile
 * paths cannot grow the number of series.
 */
import type { Context, Middleware } from 'koa';
import { AppError } from '../../errors.ts';
import type { IngestKind, Metrics } from '../../metrics/metrics.ts';
import type { AppState } from '../state.ts';
import { DASHBOARD_PATH, inDashboard } from '../dashboard.ts';

/**
 * The route pattern @koa/router matched (its last matched endpoint layer,
 * also when a `router.use` middleware refused the request first),
 * `/admin/queues` for the dashboard, or `unmatched`.
 */
export function routeOf(ctx: Context): string {
  const matched = (ctx as Context & { matched?: { path: string | RegExp; methods: string[] }[] }).matched ?? [];
  const endpoint = matched.findLast((layer) => layer.methods.length > 0);
  if (endpoint && typeof endpoint.path === 'string') return endpoint.path;
  return inDashboard(ctx.path) ? DASHBOARD_PATH : 'unmatched';
}

export function httpMetricsMiddleware(metrics: Metrics): Middleware<AppState> {
  return async (ctx, next) => {
    const stop = metrics.httpDuration.startTimer();
    try {
      await next();
    } finally {
      stop({ method: ctx.method, route: routeOf(ctx), status: String(ctx.status) });
    }
  };
}

/**
 * Counts a request refused as a whole (bad body, bad key, ...) as one
 * rejected session or event. Entries skipped inside an accepted sessions
 * body are counted by the sessions service, which knows how many there were.
 */
export function countRejected(metrics: Metrics, kind: IngestKind): Middleware<AppState> {
  return async (_ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (err instanceof AppError && err.status < 500 && err.reason !== 'no_valid_sessions') metrics.ingest(kind, 'rejected');
      throw err;
    }
  };
}
