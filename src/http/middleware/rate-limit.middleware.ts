/**
 * Spec 8: 3,000 requests per minute per key on the sessions endpoints,
 * counted in Redis so every API process shares one budget. The key is
 * counted by its hash, never stored raw. If Redis is unreachable each
 * process falls back to its own in-memory budget: ingestion goes on (the
 * data is durable in MongoDB) rather than failing closed.
 *
 * Every answer carries `RateLimit-Policy` and `RateLimit` (IETF
 * draft-ietf-httpapi-ratelimit-headers); a refusal is 429 with Retry-After.
 */
import type { Middleware } from 'koa';
import type { RedisClient } from '../../redis/connect.ts';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { RateLimitedError } from '../../errors.ts';
import { hashSecret } from '../../crypto/keys.ts';
import type { AppState } from '../state.ts';
import { routeOf } from './metrics.middleware.ts';

const WINDOW_SECONDS = 60;

export interface RateLimitOptions {
  redis: RedisClient;
  prefix: string;
  perMinute: number;
  /** called on each refusal with the route pattern (metrics) */
  onRefused?: (route: string) => void;
}

export function makeRateLimiter(opts: RateLimitOptions) {
  const limiter = new RateLimiterRedis({
    storeClient: opts.redis,
    keyPrefix: `${opts.prefix}:ratelimit:sessions`,
    points: opts.perMinute,
    duration: WINDOW_SECONDS,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory({ points: opts.perMinute, duration: WINDOW_SECONDS }),
  });
  const policy = `${opts.perMinute};w=${WINDOW_SECONDS}`;
  const headers = (res: RateLimiterRes) => ({
    'RateLimit-Policy': policy,
    RateLimit: `limit=${opts.perMinute}, remaining=${Math.max(0, res.remainingPoints)}, reset=${Math.ceil(res.msBeforeNext / 1000)}`,
  });

  /** Consumes one request of `key`'s budget, or throws the 429. */
  return function rateLimit(keyOf: (ctx: Parameters<Middleware<AppState>>[0]) => string): Middleware<AppState> {
    return async (ctx, next) => {
      const key = hashSecret(keyOf(ctx)).slice(0, 32);
      let res: RateLimiterRes;
      try {
        res = await limiter.consume(key);
      } catch (refused) {
        if (!(refused instanceof RateLimiterRes)) throw refused;
        opts.onRefused?.(routeOf(ctx));
        throw new RateLimitedError(Math.max(1, Math.ceil(refused.msBeforeNext / 1000)), headers(refused));
      }
      ctx.set(headers(res));
      await next();
    };
  };
}
export type RateLimiter = ReturnType<typeof makeRateLimiter>;
