/**
 * Readiness: can this process reach both stores right now? Each check has
 * a short deadline, so a store that hangs reads as down instead of holding
 * the probe.
 */
import type { RedisClient } from '../redis/connect.ts';
import type { Db } from 'mongodb';
import { redisMemory, type RedisMemory } from '../redis/memory.ts';
import { deadline } from '../util/deadline.ts';

const CHECK_TIMEOUT_MS = 2000;

export type StoreName = 'redis' | 'mongodb';
export interface Readiness {
  ready: boolean;
  /** `ok`, or why the store failed */
  checks: Record<StoreName, string>;
  /** set when Redis is at its `maxmemory`: it refuses writes, and processing waits */
  redisFull: RedisMemory | null;
}

/**
 * PING once the connection is up. The producer connection queues nothing
 * while it is down (enqueues fail fast), so a probe that arrives while it is
 * still connecting, right after start, waits for it within the deadline.
 */
function pingWhenReady(redis: RedisClient): Promise<unknown> {
  if (redis.status === 'ready') return redis.ping();
  return new Promise((resolve, reject) => {
    const onReady = () => {
      clearTimeout(timer);
      redis.ping().then(resolve, reject);
    };
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(new Error(`Redis not connected (${redis.status})`));
    }, CHECK_TIMEOUT_MS);
    redis.once('ready', onReady);
  });
}

export function makeHealthService(deps: { redis: RedisClient; db: Db }) {
  const probe = async (work: () => Promise<unknown>, what: string): Promise<string> => {
    try {
      await deadline(work(), CHECK_TIMEOUT_MS, what);
      return 'ok';
    } catch (err) {
      return (err as Error).message || 'unavailable';
    }
  };
  return {
    async readiness(): Promise<Readiness> {
      const [redis, mongodb] = await Promise.all([
        probe(() => pingWhenReady(deps.redis), 'Redis PING'),
        probe(() => deps.db.command({ ping: 1 }), 'MongoDB ping'),
      ]);
      const memory = redis === 'ok' ? await deadline(redisMemory(deps.redis), CHECK_TIMEOUT_MS, 'Redis INFO').catch(() => null) : null;
      return { ready: redis === 'ok' && mongodb === 'ok', checks: { redis, mongodb }, redisFull: memory?.full ? memory : null };
    },
  };
}
export type HealthService = ReturnType<typeof makeHealthService>;
