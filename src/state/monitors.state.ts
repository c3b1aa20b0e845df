/**
 * Each monitor environment's state in Redis (src/domain/monitor-state.ts), read, moved by a pure function and saved
 * back only if no one saved meanwhile (save-monitor-3.lua): one monitor's check-ins and minutes are applied one at a
 * time, each once, by any number of workers.
 *
 * Under the project's hash tag:
 *   mon       hash: '<slug>\n<environment>' -> {v: version, t: the last minute the clock applied, s: the state}
 *   mondue    zset: the same fields -> when the clock must look at each again (ms)
 *   monseen   zset: stored check-in ids applied -> when applied (ms), the last day's
 * Across projects: `<prefix>:monitors:projects`, the projects with monitors, for the clock; `<prefix>:monitors:heard`,
 * the minutes an API process was up to hear check-ins (a sorted set of minutes, the last day's), for its guard.
 */
import { NEW_STATE, type Applied, type MonitorEnvState } from '../domain/monitor-state.ts';
import type { RedisClient } from '../redis/connect.ts';
import { takeLease } from './lease.ts';
import { defineScripts, projectKeys } from './scripts.ts';

/** Check-in ids are remembered this long: a job retried within it applies nothing twice. */
const SEEN_MS = 24 * 3_600_000;
/** Minutes an API process was up are remembered this long. */
const HEARD_MS = 24 * 3_600_000;
/** Saves that met another writer before one went through: past this, the job fails and is retried. */
const MAX_TRIES = 100;

interface Stored {
  v: number;
  /** the last minute (ms) the clock applied */
  t: number;
  s: MonitorEnvState;
}

export interface MonitorRef {
  project: number;
  slug: string;
  environment: string;
}

const fieldOf = (m: Pick<MonitorRef, 'slug' | 'environment'>) => `${m.slug}\n${m.environment}`;

export function makeMonitorsState(redis: RedisClient, opts: { prefix: string }) {
  const r = defineScripts(redis);
  const keys = (project: number) => {
    const { base } = projectKeys(opts.prefix, project);
    return { mon: `${base}mon`, due: `${base}mondue`, seen: `${base}monseen` };
  };
  const across = `${opts.prefix.replace(/[{}]/g, '')}:monitors`;
  const [projectsKey, heardKey, clockKey] = [`${across}:projects`, `${across}:heard`, `${across}:clock`];

  async function read(m: MonitorRef): Promise<Stored> {
    const raw = await redis.hget(keys(m.project).mon, fieldOf(m));
    return raw ? (JSON.parse(raw) as Stored) : { v: 0, t: 0, s: NEW_STATE };
  }

  /**
   * Reads the state, moves it by `move` and saves it if no one saved meanwhile (else reads again); `applied` is
   * what moved it (a stored check-in's id, or the clock's minute). Answers what moved, or null when it was applied
   * before (or `move` answered null: nothing to do).
   */
  async function update(m: MonitorRef, applied: { checkIn: string } | { minute: number }, move: (state: MonitorEnvState) => Applied | null, dueOf: (state: MonitorEnvState) => number | null): Promise<Applied | null> {
    const k = keys(m.project);
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      const stored = await read(m);
      if ('minute' in applied && stored.t >= applied.minute) return null;
      const moved = move(stored.s);
      if (!moved) return null;
      const next: Stored = { v: stored.v + 1, t: 'minute' in applied ? applied.minute : stored.t, s: moved.state };
      const due = dueOf(moved.state);
      const now = Date.now();
      // listed for the clock before its first state is saved: a crash between leaves a listed project, not a lost one
      if (stored.v === 0) await redis.sadd(projectsKey, String(m.project));
      const code = await r.saveMonitor(k.mon, k.due, k.seen, fieldOf(m), stored.v, JSON.stringify(next), due ?? '', 'checkIn' in applied ? applied.checkIn : '', now, now - SEEN_MS);
      if (code === 1) return moved;
      if (code === 2) return null;
    }
    throw new Error(`monitor ${m.slug} (${m.environment}) of project ${m.project}: ${MAX_TRIES} saves met another writer`);
  }

  return {
    read: async (m: MonitorRef) => (await read(m)).s,
    update,
    /** Records that an API process is up this minute (it calls this more often than once a minute). */
    async heard(now: number): Promise<void> {
      const minute = now - (now % 60_000);
      await redis.multi().zadd(heardKey, minute, String(minute)).zremrangebyscore(heardKey, '-inf', `(${minute - HEARD_MS}`).exec();
    },
    /** The minutes an API process was up, from `from` to `to` (ms). */
    async heardMinutes(from: number, to: number): Promise<Set<number>> {
      return new Set((await redis.zrangebyscore(heardKey, from, to)).map(Number));
    },
    /** The clock: the last minute judged (ms); the first call ever makes it the minute before `minute`. */
    async lastJudged(minute: number): Promise<number> {
      await redis.set(clockKey, String(minute - 60_000), 'NX');
      return Number(await redis.get(clockKey));
    },
    /** The lease on judging one minute (null: another worker holds it). */
    leaseMinute: (minute: number, ms: number) => takeLease(redis, `${clockKey}:${minute}`, ms),
    /** The minute is judged: the clock moves to it (never back). */
    judged: (minute: number) => r.raiseCounter(clockKey, minute),
    /** The projects that have monitors. */
    projects: async () => (await redis.smembers(projectsKey)).map(Number),
    /** A project's monitor environments due by `at` (ms), at most `limit`. */
    async due(project: number, at: number, limit: number): Promise<Pick<MonitorRef, 'slug' | 'environment'>[]> {
      const fields = await redis.zrangebyscore(keys(project).due, '-inf', at, 'LIMIT', 0, limit);
      return fields.map((f) => {
        const cut = f.indexOf('\n');
        return { slug: f.slice(0, cut), environment: f.slice(cut + 1) };
      });
    },
  };
}
export type MonitorsState = ReturnType<typeof makeMonitorsState>;
