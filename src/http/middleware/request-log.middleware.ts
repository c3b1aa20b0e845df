/**
 * Gives every request an id (returned in X-Request-Id) and a child logger
 * that puts it on every line. Only the path is logged, never the query
 * string (beacons carry the public key there) nor headers.
 */
import crypto from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../log.ts';
import type { AppState } from '../state.ts';

const INCOMING_ID = /^[A-Za-z0-9._-]{1,64}$/;

export function requestLogMiddleware(log: Logger): Middleware<AppState> {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = INCOMING_ID.test(incoming) ? incoming : crypto.randomUUID();
    const started = process.hrtime.bigint();
    ctx.state.requestId = requestId;
    ctx.state.log = log.child({ req_id: requestId });
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      ctx.state.log.info({ method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10 }, 'request');
    }
  };
}
