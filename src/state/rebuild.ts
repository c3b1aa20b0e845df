/**
 * Keeping the Redis state honest after Redis restarts (docs/operations.md).
 *
 * A project's scripts run only while its `epoch` key holds the run id of the
 * Redis serving them. A restarted Redis (new run id), or one that came back
 * empty, refuses them until `verify` has compared its change counter with
 * the one the last flush recorded in MongoDB:
 * - not behind: Redis kept everything MongoDB has; batches applied after the
 *   last flush and lost with Redis' last second are still on the backlog and
 *   are applied again (their applied marks were lost with them);
 * - behind, or empty while MongoDB has flushed state: `rebuild` recounts the
 *   project from its raw batches.
 * `npx lookout admin recount` runs the same rebuild by hand.
 */
import crypto from 'node:crypto';
import { emptyState, replayPart, type BatchPart, type HourRollup, type ReleaseRollup } from '../domain/release-health.ts';
import { hourOf, STATUSES } from '../domain/sessions.ts';
import type { Logger } from '../log.ts';
import { unpackRequest, type Flushed, type SessionBatchDoc, type SessionsStore } from '../store/sessions.store.ts';
import { APPLIED_MEMORY_MS, encodeSession, type SessionState } from './sessions.state.ts';

const REBUILD_LEASE_MS = 10 * 60_000;

export class StateBusyError extends Error {
  constructor(project: number) {
    super(`the Redis state of project ${project} is being verified or rebuilt by another process; retry`);
    this.name = 'StateBusyError';
  }
}

/** Each project's part of a raw batch. */
export function partsOf(batch: SessionBatchDoc): Map<number, BatchPart> {
  const parts = new Map<number, BatchPart>();
  for (const request of batch.requests) {
    let part = parts.get(request.project_id);
    if (!part) parts.set(request.project_id, (part = { sessions: [], aggregates: [] }));
    const entries = unpackRequest(request);
    part.sessions.push(...entries.sessions);
    part.aggregates.push(...entries.aggregates);
  }
  return parts;
}

export function makeStateKeeper(deps: { state: SessionState; store: SessionsStore; log: Logger }) {
  const { state, store, log } = deps;
  const redis = state.redis;

  /** Runs `fn` holding the project's rebuild lease (a rare path: restarts and recounts only). */
  async function leased<T>(project: number, fn: () => Promise<T>): Promise<T> {
    const key = state.keys(project).rebuild;
    const token = crypto.randomBytes(8).toString('hex');
    if ((await redis.set(key, token, 'PX', REBUILD_LEASE_MS, 'NX')) !== 'OK') throw new StateBusyError(project);
    try {
      return await fn();
    } finally {
      if ((await redis.get(key)) === token) await redis.del(key);
    }
  }

  /** Recounts the project from its raw batches into Redis and the MongoDB rollups. Hold the lease. */
  async function rebuildLeased(project: number, now: Date): Promise<{ batches: number; sessions: number }> {
    const k = state.keys(project);
    await redis.del(k.epoch); // the project's scripts refuse to run from here on
    const previous = Math.max(Number((await redis.get(k.seq)) ?? 0), await store.flushedSeq(project));
    const seq = previous + 1;

    const replayed = emptyState();
    const applied: [number, string][] = [];
    let batches = 0;
    for await (const batch of store.batchesOf(project)) {
      const part = partsOf(batch).get(project);
      if (!part) continue;
      replayPart(project, replayed, batch._id, part, batch.received_at, state.windowMs);
      if (batch.received_at.getTime() > now.getTime() - APPLIED_MEMORY_MS) applied.push([batch.received_at.getTime(), batch._id]);
      batches += 1;
    }

    // MongoDB first: the mark, then rollups newer than any stored one.
    await store.setFlushedSeq(project, seq);
    const v = <T>(doc: T) => ({ ...doc, v: seq });
    await store.writeRollups({
      hours: [...replayed.hours.values()].map(v) as Flushed<HourRollup>[],
      releases: [...replayed.releases.values()].map(v) as Flushed<ReleaseRollup>[],
    });

    // Then Redis: drop what the project had, write the recounted state, and last the epoch.
    for await (const found of redis.scanStream({ match: `${k.base}*`, count: 1000 })) {
      const drop = (found as string[]).filter((key) => key !== k.rebuild);
      if (drop.length > 0) await redis.unlink(...drop);
    }
    const userTtl = state.windowMs + 3600_000 + 86_400_000;
    const live = (at: Date) => at.getTime() + userTtl > now.getTime();
    const bucket = (d: { environment: string; release: string }) => JSON.stringify([d.environment, d.release]);
    const counts = (c: Record<string, number>, prefix: string) => STATUSES.flatMap((s, i) => [`${prefix}${i}`, String(c[s])]);
    const pipe = redis.pipeline();
    let sessions = 0;
    for (const s of replayed.sessions.values()) {
      const expires = s.started.getTime() + state.windowMs;
      if (expires <= now.getTime()) continue;
      pipe.set(`${k.base}s:${s.sid}`, encodeSession({ ...s, hour: hourOf(s.started) }), 'PXAT', expires);
      sessions += 1;
    }
    for (const u of replayed.users.values()) {
      if (u.hour && !live(u.hour)) continue;
      const key = u.hour ? `${k.base}uh:${u.hour.getTime()}:${bucket(u)}` : `${k.base}ur:${bucket(u)}`;
      pipe.hset(key, u.did, String(STATUSES.indexOf(u.status)));
      if (u.hour) pipe.pexpireat(key, u.hour.getTime() + userTtl);
    }
    for (const h of replayed.hours.values()) {
      if (!live(h.hour)) continue;
      const key = `${k.base}rh:${h.hour.getTime()}:${bucket(h)}`;
      pipe.hset(key, ...counts(h.sessions, 's'), ...counts(h.users, 'u'));
      pipe.pexpireat(key, h.hour.getTime() + userTtl);
    }
    for (const r of replayed.releases.values()) {
      pipe.hset(`${k.base}rr:${bucket(r)}`, ...counts(r.sessions, 's'), ...counts(r.users, 'u'), 'f', String(r.first_seen.getTime()), 'l', String(r.last_seen.getTime()));
    }
    for (let i = 0; i < applied.length; i += 1000) pipe.zadd(k.applied, ...applied.slice(i, i + 1000).flat());
    pipe.set(k.seq, String(seq));
    await pipe.exec();
    await redis.set(k.epoch, await state.runId());
    log.warn({ project, batches, sessions, seq }, 'rebuilt the Redis state of a project from its raw batches');
    return { batches, sessions };
  }

  return {
    /** Makes the project's state usable on this Redis: trusted as it is, or rebuilt. */
    async verify(project: number, now: Date): Promise<'verified' | 'rebuilt'> {
      const k = state.keys(project);
      const runId = await state.runId();
      if ((await redis.get(k.epoch)) === runId) return 'verified';
      return leased(project, async () => {
        if ((await redis.get(k.epoch)) === runId) return 'verified';
        const [held, flushed] = [Number((await redis.get(k.seq)) ?? 0), await store.flushedSeq(project)];
        if (held >= flushed) {
          await redis.set(k.epoch, runId);
          log.info({ project, seq: held, flushed }, 'Redis state of the project verified against MongoDB');
          return 'verified';
        }
        log.warn({ project, seq: held, flushed }, 'Redis lost state of the project that MongoDB has; rebuilding it from the raw batches');
        await rebuildLeased(project, now);
        return 'rebuilt';
      });
    },
    /** `npx lookout admin recount`: rebuilds the project whatever Redis holds. */
    rebuild: (project: number, now: Date) => leased(project, () => rebuildLeased(project, now)),
  };
}
export type StateKeeper = ReturnType<typeof makeStateKeeper>;
