/**
 * Uptime probes' schedule and state in Redis (issue 68). `<prefix>:probes:due`, a sorted set of every probe
 * (`<project>:<id>`) by when it is next checked: a worker claims a due probe by its lease (one worker checks it; a
 * lease a dead worker held runs out in a minute) and moves it to its next time. Each probe's state (src/domain/probes.ts) under its project's hash tag, in
 * the hash `probe`: id → JSON; only the worker that claimed the probe writes it.
 */
import { NEW_PROBE, type ProbeState } from '../domain/probes.ts';
import type { RedisClient } from '../redis/connect.ts';
import { takeLease, type Lease } from './lease.ts';
import { projectKeys } from './scripts.ts';

/** How long a claim holds a probe: longer than a check with its confirmation and redirects takes. */
const LEASE_MS = 90_000;

export interface ProbeRef {
  project: number;
  id: number;
}

export function makeProbesState(redis: RedisClient, opts: { prefix: string }) {
  const dueKey = `${opts.prefix.replace(/[{}]/g, '')}:probes:due`;
  const stateKey = (project: number) => `${projectKeys(opts.prefix, project).base}probe`;
  const member = (p: ProbeRef) => `${p.project}:${p.id}`;
  return {
    /** The probe is next checked at `at` (ms). */
    schedule: async (p: ProbeRef, at: number) => void (await redis.zadd(dueKey, at, member(p))),
    async forget(p: ProbeRef): Promise<void> {
      await redis.zrem(dueKey, member(p));
      await redis.hdel(stateKey(p.project), String(p.id));
    },
    /**
     * Claims up to `limit` probes due by `now` (ms), each with when it was due and its lease (end it once the probe
     * is scheduled again); another worker's claims are not taken.
     */
    async claimDue(now: number, limit: number): Promise<(ProbeRef & { due: number; lease: Lease })[]> {
      const found = await redis.zrangebyscore(dueKey, '-inf', now, 'WITHSCORES', 'LIMIT', 0, limit);
      const claimed = [];
      for (let i = 0; i < found.length; i += 2) {
        const lease = await takeLease(redis, `${dueKey}:lease:${found[i]}`, LEASE_MS);
        if (!lease) continue;
        const [project, id] = found[i]!.split(':').map(Number) as [number, number];
        claimed.push({ project, id, due: Number(found[i + 1]), lease });
      }
      return claimed;
    },
    async read(p: ProbeRef): Promise<ProbeState> {
      const raw = await redis.hget(stateKey(p.project), String(p.id));
      return raw ? (JSON.parse(raw) as ProbeState) : NEW_PROBE;
    },
    save: async (p: ProbeRef, s: ProbeState) => void (await redis.hset(stateKey(p.project), String(p.id), JSON.stringify(s))),
  };
}
export type ProbesState = ReturnType<typeof makeProbesState>;
