/**
 * What a repacker has yet to do (src/services/repack.service.ts): a sorted
 * set of ids, scored by the time at the head of each id
 * (src/util/group-commit.ts): the groups of sign-in attempts workers applied,
 * to be read back and rewritten, or the raw session batches a part holds,
 * whose own documents are to be deleted. The repacker takes them a minute at
 * a time, oldest first, and removes them once done.
 */
import type { RedisClient } from '../redis/connect.ts';
import { REPACK_BUCKET_MS } from '../store/attempts.store.ts';
import { groupTime } from '../util/group-commit.ts';

export interface RepackDue {
  /** the minute, in minutes since the epoch */
  bucket: number;
  ids: string[];
}

export function makeRepackList(redis: RedisClient, key: string) {
  return {
    /** Lists ids (again: a later run finds them rewritten, or leaves them as they are). */
    add: (...ids: string[]) => redis.zadd(key, 'NX', ...ids.flatMap((id) => [groupTime(id), id])),
    /** The oldest minute listed, if it ended before `before` (epoch ms). */
    async due(before: number): Promise<RepackDue | null> {
      const [, score] = await redis.zrange(key, 0, 0, 'WITHSCORES');
      if (score === undefined) return null;
      const bucket = Math.floor(Number(score) / REPACK_BUCKET_MS);
      if ((bucket + 1) * REPACK_BUCKET_MS > before) return null;
      return { bucket, ids: await redis.zrangebyscore(key, bucket * REPACK_BUCKET_MS, (bucket + 1) * REPACK_BUCKET_MS - 1) };
    },
    async done(ids: string[]): Promise<void> {
      if (ids.length > 0) await redis.zrem(key, ...ids);
    },
    pending: (): Promise<number> => redis.zcard(key),
  };
}
export type RepackList = ReturnType<typeof makeRepackList>;
