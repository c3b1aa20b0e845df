/**
 * A full Redis: Lookout's Redis runs `noeviction` (BullMQ needs it), so at
 * `maxmemory` it refuses every write with an OOM error while reads go on.
 * Ingestion keeps answering (raw entries are durable in MongoDB; the sweeper
 * enqueues them once Redis takes writes again), and jobs wait and retry, so
 * nothing is lost; this module is how the processes notice and say so.
 */
import type { Logger } from '../log.ts';
import { primaries, type RedisClient } from './connect.ts';

export interface RedisMemory {
  /** bytes in use, summed over the primaries */
  used: number;
  /** `maxmemory` summed over the primaries (0: no limit on one of them) */
  max: number;
  /** a primary is at its `maxmemory`, or refused this process a write a moment ago */
  full: boolean;
}

/**
 * How long a refused write keeps Redis "full" for this process. `used_memory`
 * counts client buffers, so it dips below `maxmemory` for a moment between
 * refusals; without this, `/readyz` and the gauge would flap under load.
 */
const REFUSAL_HOLDS_MS = 10_000;
let lastRefusalAt = -Infinity;

/** Whether an error is Redis refusing a write at `maxmemory`; a refusal is remembered for `redisMemory`. */
export function isRedisFull(err: unknown): boolean {
  const full = /^OOM /.test((err as { message?: string } | null)?.message ?? '');
  if (full) lastRefusalAt = Date.now();
  return full;
}

/** `INFO memory` of every primary. */
export async function redisMemory(redis: RedisClient): Promise<RedisMemory> {
  const out: RedisMemory = { used: 0, max: 0, full: false };
  let unlimited = false;
  for (const node of primaries(redis)) {
    const info = await node.info('memory');
    const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);
    const used = field('used_memory');
    const max = field('maxmemory');
    out.used += used;
    out.max += max;
    if (max === 0) unlimited = true;
    else if (used >= max) out.full = true;
  }
  if (unlimited) out.max = 0;
  if (Date.now() - lastRefusalAt < REFUSAL_HOLDS_MS) out.full = true;
  return out;
}

const FULL_LOG_EVERY_MS = 60_000;

/** Logs "Redis is full" at most once a minute per process, however many refused writes report it. */
export function makeFullRedisLog(log: Logger): (err: unknown, what: string) => void {
  let last = 0;
  return (err, what) => {
    if (!isRedisFull(err) || Date.now() - last < FULL_LOG_EVERY_MS) return;
    last = Date.now();
    log.error(
      { err: (err as Error).message, what },
      'Redis is full (maxmemory reached): writes are refused; ingestion is still acknowledged and kept in MongoDB, processing waits until memory is freed or maxmemory raised (docs/operations.md)',
    );
  };
}
