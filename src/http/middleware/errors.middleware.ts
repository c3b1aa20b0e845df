/**
 * The one place that maps errors to HTTP bodies: every non-2xx answer is
 * JSON `{reason, message, ...}`. Unknown errors are logged with the request
 * id and answered with a 500 that names only that id.
 */
import type { Middleware } from 'koa';
import { MongoNetworkError, MongoNotConnectedError, MongoServerSelectionError } from 'mongodb';
import { AppError } from '../../errors.ts';
import { isRedisUnavailable } from '../../redis/connect.ts';
import { isRedisFull } from '../../redis/memory.ts';
import type { AppState } from '../state.ts';

export function errorsMiddleware(): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
      // Answers the routers leave without a body (no route; a route without this method) are JSON too.
      if (ctx.body === undefined || ctx.body === null) {
        const status = ctx.status;
        const allowed = String(ctx.response.get('Allow') ?? '').split(/,\s*/).filter(Boolean);
        const body =
          status === 404
            ? { reason: 'route_not_found', message: `no route for ${ctx.method} ${ctx.path}` }
            : status === 405 || status === 501
              ? { reason: status === 405 ? 'method_not_allowed' : 'method_not_implemented', message: `${ctx.path} does not take ${ctx.method}; it takes ${allowed.join(', ')}`, allowed }
              : null;
        if (body) {
          ctx.body = sentryShaped(ctx.path, body);
          ctx.status = status; // setting a body would otherwise turn Koa's implicit 404 into 200
        }
      }
    } catch (err) {
      if (err instanceof AppError) {
        ctx.status = err.status;
        ctx.set(err.headers);
        ctx.body = sentryShaped(ctx.path, { reason: err.reason, message: err.message, ...err.details });
        ctx.state.log.info({ status: err.status, reason: err.reason }, 'request refused');
        return;
      }
      // A store that is down or full: say so, with a retry hint, instead of an anonymous 500.
      const away = storeAway(err);
      if (away) {
        ctx.state.log.warn({ err: (err as Error).message }, away.log);
        ctx.status = 503;
        ctx.set('Retry-After', String(away.retryAfter));
        ctx.body = { reason: away.reason, message: away.message, request_id: ctx.state.requestId };
        return;
      }
      const status = (err as { status?: number; expose?: boolean }).status;
      if (typeof status === 'number' && status >= 400 && status < 500) {
        // Koa's own client errors (for example a malformed URL).
        ctx.status = status;
        ctx.body = { reason: 'bad_request', message: (err as Error).message };
        return;
      }
      ctx.state.log.error({ err }, 'unhandled error');
      ctx.status = 500;
      ctx.body = { reason: 'internal', message: 'internal error', request_id: ctx.state.requestId };
    }
  };
}

/** Why a store cannot serve the request now, if that is what the error says. */
/** Sentry's web API (`/api/0`) answers errors with `detail`, which its tools print: the message is given there too. */
function sentryShaped(path: string, body: { reason: string; message: string }) {
  return path.startsWith('/api/0/') ? { detail: body.message, ...body } : body;
}

function storeAway(err: unknown): { reason: string; message: string; log: string; retryAfter: number } | null {
  if (err instanceof MongoServerSelectionError || err instanceof MongoNetworkError || err instanceof MongoNotConnectedError) {
    return { reason: 'store_unavailable', message: 'the database did not answer; retry later', log: 'database unavailable', retryAfter: 5 };
  }
  // Redis at its maxmemory: a change of state waits until memory is freed (ingestion does not: it is in MongoDB).
  if (isRedisFull(err)) {
    return { reason: 'redis_full', message: 'Redis is at its maxmemory and refuses changes; retry once an operator frees memory', log: 'redis full', retryAfter: 30 };
  }
  // Redis is away, or a cluster slot has no primary during a failover: reads and changes of state wait for it.
  if (isRedisUnavailable(err)) return { reason: 'state_unavailable', message: 'Redis did not answer; retry later', log: 'redis unavailable', retryAfter: 5 };
  return null;
}
