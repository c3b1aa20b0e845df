/**
 * What waits for the flusher, per kind of state (sessions, events): the
 * projects with changes to copy to MongoDB, and the batches applied in Redis
 * whose backlog markers go once those changes are copied. Two global sets,
 * touched only by plain single-key commands (never inside a script), so they
 * need no project's hash tag.
 */
import type { RedisClient } from '../redis/connect.ts';

export function makePendingFlush(redis: RedisClient, prefix: string, kind: 'sessions' | 'events') {
  const projects = `${prefix}:${kind}:dirty-projects`;
  const batches = `${prefix}:${kind}:applied-batches`;
  return {
    /** After every part of the batches is applied: their projects have changes to flush, and the batches wait for that flush. */
    async noteApplied(projectIds: number[], batchIds: string | string[]): Promise<void> {
      const pipe = redis.pipeline();
      if (projectIds.length > 0) pipe.sadd(projects, ...projectIds.map(String));
      pipe.sadd(batches, ...[batchIds].flat());
      for (const [err] of (await pipe.exec()) ?? []) if (err) throw err;
    },
    appliedBatches: (): Promise<string[]> => redis.smembers(batches),
    async forgetApplied(ids: string[]): Promise<void> {
      if (ids.length > 0) await redis.srem(batches, ...ids);
    },
    dirtyProjects: async (): Promise<number[]> => (await redis.smembers(projects)).map(Number),
    takeDirty: (project: number) => redis.srem(projects, String(project)),
    markDirty: (project: number) => redis.sadd(projects, String(project)),
  };
}
export type PendingFlush = ReturnType<typeof makePendingFlush>;
