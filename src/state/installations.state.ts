/**
 * When each project's bound installation was last heard from (issue 68), in Redis: recorded by the API processes
 * (a few times a minute at most per project and process), read by the clock that reports a silent one.
 *
 * Under the project's hash tag, `inst`: a hash of `poll` and `ingest` (the last config poll and the last other
 * request carrying the installation's key and instance, ms), `sdk` (the user agent of its last poll), `instance`
 * (which installation was heard) and `silent` (when the silence it was reported for began, ms; absent while it is
 * heard). Across projects: `<prefix>:installations:heard`, a sorted set of projects by when each was last heard, and
 * `<prefix>:installations:silent`, the projects reported silent.
 */
import type { RedisClient } from '../redis/connect.ts';
import { projectKeys } from './scripts.ts';

export interface InstallationHeard {
  instance: string | null;
  poll: number | null;
  ingest: number | null;
  sdk: string | null;
  /** when the silence reported began (ms); null while it is heard */
  silent: number | null;
}

export function makeInstallationsState(redis: RedisClient, opts: { prefix: string }) {
  const key = (project: number) => `${projectKeys(opts.prefix, project).base}inst`;
  const across = `${opts.prefix.replace(/[{}]/g, '')}:installations`;
  const [heardKey, silentKey] = [`${across}:heard`, `${across}:silent`];
  const num = (v: string | undefined) => (v ? Number(v) : null);

  return {
    /** The installation `instance` of the project was heard at `at` (ms): a config poll, or another request. */
    async heard(project: number, instance: string, kind: 'poll' | 'ingest', at: number, sdk: string | null): Promise<void> {
      // separate commands: on a cluster the project's hash and the sets across projects are in different slots
      await redis.hset(key(project), { [kind]: at, instance, ...(kind === 'poll' && sdk ? { sdk } : {}) });
      await redis.zadd(heardKey, 'GT', at, String(project));
    },
    async read(project: number): Promise<InstallationHeard> {
      const h = await redis.hgetall(key(project));
      return { instance: h.instance ?? null, poll: num(h.poll), ingest: num(h.ingest), sdk: h.sdk ?? null, silent: num(h.silent) };
    },
    /** Projects whose installation was last heard before `before` (ms), at most `limit`. */
    quietSince: async (before: number, limit: number) => (await redis.zrangebyscore(heardKey, '-inf', before, 'LIMIT', 0, limit)).map(Number),
    /** The projects reported silent. */
    silent: async () => (await redis.smembers(silentKey)).map(Number),
    /** Reported silent since `since` (ms), or heard again (null). */
    async setSilent(project: number, since: number | null): Promise<void> {
      if (since === null) {
        await redis.hdel(key(project), 'silent');
        await redis.srem(silentKey, String(project));
      } else {
        await redis.hset(key(project), 'silent', since);
        await redis.sadd(silentKey, String(project));
      }
    },
    /** Forgets a project's installation (unbound): it is no longer watched. */
    async forget(project: number): Promise<void> {
      await redis.del(key(project));
      await redis.zrem(heardKey, String(project));
      await redis.srem(silentKey, String(project));
    },
  };
}
export type InstallationsState = ReturnType<typeof makeInstallationsState>;
