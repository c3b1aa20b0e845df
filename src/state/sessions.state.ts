/**
 * The hot state of release health in Redis: each session's worst status,
 * each user's worst status per hour and per release, and the rollups. It
 * changes only through the scripts in ./scripts (loaded once, called through
 * the typed functions here), one call per project per batch.
 *
 * Every key of a project starts with `<prefix>:{p:<id>}:`: the hash tag puts
 * them in one Redis Cluster slot, so each script touches one slot
 * (docs/scaling.md). Two keys are global and touched only by plain commands:
 * the projects with rollups to flush, and the batches applied but not flushed.
 */
import type { RedisClient } from '../redis/connect.ts';
import type { BatchPart, MergeState } from '../domain/release-health.ts';
import { hourOf, STATUSES, type SessionStatus, type StatusCounts } from '../domain/sessions.ts';
import { makePendingFlush } from './pending-flush.ts';
import { APPLY_CODES, defineScripts, dropProjectKeys, projectKeys } from './scripts.ts';

/** How long an applied batch id is remembered: far longer than any redelivery of its job. */
export const APPLIED_MEMORY_MS = 24 * 3600 * 1000;

const rank = (status: SessionStatus) => STATUSES.indexOf(status);
/** How long hourly state (users and rollups of an hour) lives past its hour, as merge-sessions-4.lua sets it. */
const hourlyTtlMs = (windowMs: number) => windowMs + 3600_000 + 86_400_000;
const bucketOf = (environment: string, release: string) => JSON.stringify([environment, release]);

/** A session's state as the script keeps it (tests and the recount read it). */
export interface StoredSession {
  status: SessionStatus;
  errors: number;
  hour: Date;
  started: Date;
  did: string | null;
  environment: string;
  release: string;
}

/** One changed rollup read by the flusher. */
export interface RollupSnapshot {
  kind: 'hour' | 'release';
  key: string;
  version: string;
  environment: string;
  release: string;
  hour: Date | null;
  sessions: StatusCounts;
  users: StatusCounts;
  first_seen: Date | null;
  last_seen: Date | null;
}

export function makeSessionState(redis: RedisClient, opts: { prefix: string; windowMs: number }) {
  const r = defineScripts(redis);

  return {
    redis,
    pending: makePendingFlush(redis, opts.prefix, 'sessions'),
    keys: (project: number) => projectKeys(opts.prefix, project),
    windowMs: opts.windowMs,

    /** Applies one project's part of a batch; `unverified` asks for `verify` first (src/state/rebuild.ts). */
    async apply(project: number, batchId: string, receivedAt: Date, part: BatchPart) {
      const k = projectKeys(opts.prefix, project);
      const entries = {
        s: part.sessions.map((u) => [u.sid, rank(u.status), u.errors, u.did ?? '', String(u.started.getTime()), String(hourOf(u.started).getTime()), bucketOf(u.environment, u.release)]),
        a: part.aggregates.map((a) => [bucketOf(a.environment, a.release), String(a.started.getTime()), String(hourOf(a.started).getTime()), a.did ?? '', a.counts.ok, a.counts.errored, a.counts.abnormal, a.counts.crashed]),
      };
      const [code, changed, unchanged, skipped] = await r.mergeSessions(k.epoch, k.seq, k.applied, k.dirty, k.base, batchId, receivedAt.getTime(), opts.windowMs, APPLIED_MEMORY_MS, JSON.stringify(entries));
      return { code: APPLY_CODES[code]!, changed, unchanged, skipped };
    },

    /** The changed rollups of a project and its change counter, read atomically. */
    async snapshot(project: number): Promise<{ verified: boolean; seq: number; rollups: RollupSnapshot[] }> {
      const k = projectKeys(opts.prefix, project);
      const [verified, seq, ...rows] = await r.snapshotRollups(k.epoch, k.seq, k.dirty, k.base);
      const rollups = rows.filter(([, , fields]) => fields.length > 0).map(([key, version, fields]) => readRollup(key, version, fields));
      return { verified: verified === 1, seq, rollups };
    },
    async clear(project: number, written: { key: string; version: string }[]): Promise<void> {
      if (written.length > 0) await r.clearDirty(projectKeys(opts.prefix, project).dirty, ...written.flatMap((w) => [w.key, w.version]));
    },

    /**
     * Replaces the project's session state with a recounted one
     * (src/state/rebuild.ts): the sessions still inside their update window,
     * users and rollups of hours still live, every release rollup, the
     * applied batch ids and the change counter. Call with the project's epoch
     * deleted, so no script runs meanwhile. Returns the sessions kept.
     */
    async replace(project: number, replayed: MergeState, at: { seq: number; applied: [number, string][]; now: Date }): Promise<number> {
      const k = projectKeys(opts.prefix, project);
      await dropProjectKeys(redis, k.base, ['s:*', 'rh:*', 'rr:*', 'uh:*', 'ur:*'], [k.seq, k.applied, k.dirty]);
      const ttl = hourlyTtlMs(opts.windowMs);
      const live = (hour: Date) => hour.getTime() + ttl > at.now.getTime();
      const counts = (c: StatusCounts, prefix: 's' | 'u') => STATUSES.flatMap((s, i) => [`${prefix}${i}`, String(c[s])]);
      const pipe = redis.pipeline();
      let sessions = 0;
      for (const s of replayed.sessions.values()) {
        const expires = s.started.getTime() + opts.windowMs;
        if (expires <= at.now.getTime()) continue;
        pipe.set(`${k.base}s:${s.sid}`, encodeSession(s), 'PXAT', expires);
        sessions += 1;
      }
      for (const u of replayed.users.values()) {
        if (u.hour && !live(u.hour)) continue;
        const key = u.hour ? `${k.base}uh:${u.hour.getTime()}:${bucketOf(u.environment, u.release)}` : `${k.base}ur:${bucketOf(u.environment, u.release)}`;
        pipe.hset(key, u.did, String(rank(u.status)));
        if (u.hour) pipe.pexpireat(key, u.hour.getTime() + ttl);
      }
      for (const h of replayed.hours.values()) {
        if (!live(h.hour)) continue;
        const key = `${k.base}rh:${h.hour.getTime()}:${bucketOf(h.environment, h.release)}`;
        pipe.hset(key, ...counts(h.sessions, 's'), ...counts(h.users, 'u'));
        pipe.pexpireat(key, h.hour.getTime() + ttl);
      }
      for (const r of replayed.releases.values()) {
        pipe.hset(`${k.base}rr:${bucketOf(r.environment, r.release)}`, ...counts(r.sessions, 's'), ...counts(r.users, 'u'), 'f', String(r.first_seen.getTime()), 'l', String(r.last_seen.getTime()));
      }
      for (let i = 0; i < at.applied.length; i += 1000) pipe.zadd(k.applied, ...at.applied.slice(i, i + 1000).flat());
      pipe.set(k.seq, String(at.seq));
      await pipe.exec();
      return sessions;
    },

    /** A session's stored state, or null (unknown, or past the update window). */
    async session(project: number, sid: string): Promise<StoredSession | null> {
      const value = await redis.get(`${projectKeys(opts.prefix, project).base}s:${sid}`);
      return value ? readSession(value) : null;
    },

    /** The run id of the Redis server holding the project's state: a restart, a new server or a promoted replica changes it. */
    runId: (project: number): Promise<string> => r.runId(projectKeys(opts.prefix, project).epoch),
  };
}
export type SessionState = ReturnType<typeof makeSessionState>;

/** `rank|errors|hour|started|did|bucket`, as merge-sessions-4.lua writes it. */
function encodeSession(s: StoredSession): string {
  return [rank(s.status), s.errors, s.hour.getTime(), s.started.getTime(), s.did ?? '', bucketOf(s.environment, s.release)].join('|');
}

function readSession(value: string): StoredSession {
  const [, r, errors, hour, started, did, bucket] = /^(\d)\|(\d+)\|(\d+)\|(\d+)\|([^|]*)\|(.*)$/.exec(value)!;
  const [environment, release] = JSON.parse(bucket!) as [string, string];
  return { status: STATUSES[Number(r)]!, errors: Number(errors), hour: new Date(Number(hour)), started: new Date(Number(started)), did: did || null, environment, release };
}

/** A rollup key (`rh:<hour>:<bucket>` or `rr:<bucket>`) and its hash → the rollup. */
function readRollup(key: string, version: string, fields: string[]): RollupSnapshot {
  const hash: Record<string, string> = {};
  for (let i = 0; i < fields.length; i += 2) hash[fields[i]!] = fields[i + 1]!;
  const counts = (prefix: 's' | 'u') => Object.fromEntries(STATUSES.map((s, i) => [s, Number(hash[`${prefix}${i}`] ?? 0)])) as StatusCounts;
  const hourly = /^rh:(\d+):(.*)$/.exec(key);
  const [environment, release] = JSON.parse(hourly ? hourly[2]! : key.slice(3)) as [string, string];
  const at = (field: string) => (hash[field] ? new Date(Number(hash[field])) : null);
  return {
    kind: hourly ? 'hour' : 'release',
    key,
    version,
    environment,
    release,
    hour: hourly ? new Date(Number(hourly[1])) : null,
    sessions: counts('s'),
    users: counts('u'),
    first_seen: at('f'),
    last_seen: at('l'),
  };
}
