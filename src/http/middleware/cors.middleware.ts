/**
 * CORS for the endpoints browsers post to with the public key (sessions, the
 * envelope): any origin may post, no cookies are involved. Preflights are
 * answered here; the headers are set before the route runs so that error
 * answers are readable by the page too.
 */
import type { Middleware } from 'koa';
import type { AppState } from '../state.ts';

const ALLOWED_HEADERS = 'Content-Type, X-Service-Key, X-Sentry-Auth, Content-Encoding';
// X-Sentry-Rate-Limits and Retry-After: a browser SDK reads how long to hold back from them (a 429 alone it holds
// for a minute)
const EXPOSED_HEADERS = 'Retry-After, X-Sentry-Rate-Limits, RateLimit, RateLimit-Policy, X-Request-Id';
/** What every answer of a CORS route carries, refusals made before the route included. */
export const CORS_ANSWER_HEADERS = { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': EXPOSED_HEADERS } as const;

export function corsMiddleware(): Middleware<AppState> {
  return async (ctx, next) => {
    ctx.set(CORS_ANSWER_HEADERS);
    if (ctx.method === 'OPTIONS') {
      ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
      ctx.set('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      ctx.set('Access-Control-Max-Age', '86400');
      ctx.status = 204;
      return;
    }
    await next();
  };
}
