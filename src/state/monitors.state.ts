/**
 * Each monitor environment's state in Redis (src/domain/monitor-state.ts), read, moved by a pure function and saved
 * back only if no one saved meanwhile (save-monitor-4.lua): one monitor's check-ins and minutes are applied one at a
 * time, each once, by any number of workers.
 *
 * Under the project's hash tag:
 *   mon       hash: '<slug>\n<environment>' -> {v: version, t: the last minute the clock applied, s: the state,
 *             o: its outbox, what each move changed beyond the state until it is delivered}
 *   mondue    zset: the same fields -> when the clock must look at each again (ms)
 *   monseen   zset: stored check-in ids applied -> when applied (ms), the last day's
 *   monout    zset: the fields whose outbox holds something -> when it was last added to (ms)
 * Across projects: `<prefix>:monitors:projects`, the projects with monitors, for the clock; `<prefix>:monitors:heard`,
 * the minutes an API process was up to hear check-ins (a sorted set of minutes, the last day's), for its guard.
 */
import { NEW_STATE, dueAt, type Applied, type CheckInRecord, type MonitorEffect, type MonitorEnvState } from '../domain/monitor-state.ts';
import type { RedisClient } from '../redis/connect.ts';
import { takeLease } from './lease.ts';
import { defineScripts, projectKeys } from './scripts.ts';

/** Check-in ids are remembered this long: a job retried within it applies nothing twice. */
const SEEN_MS = 24 * 3_600_000;
/** Minutes an API process was up are remembered this long. */
const HEARD_MS = 24 * 3_600_000;
/** Saves that met another writer before one went through: past this, the job fails and is retried. */
const MAX_TRIES = 100;

/** What one move changed beyond the state, kept with it until delivered: `key` names the move (a check-in's stored id, `m:<minute>`). */
export interface MonitorOutboxItem {
  key: string;
  records: CheckInRecord[];
  effects: MonitorEffect[];
}

interface Stored {
  v: number;
  /** the last minute (ms) the clock applied */
  t: number;
  s: MonitorEnvState;
  o?: MonitorOutboxItem[];
}

export interface MonitorRef {
  project: number;
  slug: string;
  environment: string;
}

const fieldOf = (m: Pick<MonitorRef, 'slug' | 'environment'>) => `${m.slug}\n${m.environment}`;
const refOf = (field: string): Pick<MonitorRef, 'slug' | 'environment'> => {
  const cut = field.indexOf('\n');
  return { slug: field.slice(0, cut), environment: field.slice(cut + 1) };
};

export function makeMonitorsState(redis: RedisClient, opts: { prefix: string }) {
  const r = defineScripts(redis);
  const keys = (project: number) => {
    const { base } = projectKeys(opts.prefix, project);
    return { mon: `${base}mon`, due: `${base}mondue`, seen: `${base}monseen`, out: `${base}monout` };
  };
  const across = `${opts.prefix.replace(/[{}]/g, '')}:monitors`;
  const [projectsKey, heardKey, clockKey] = [`${across}:projects`, `${across}:heard`, `${across}:clock`];

  async function read(m: MonitorRef): Promise<Stored> {
    const raw = await redis.hget(keys(m.project).mon, fieldOf(m));
    return raw ? (JSON.parse(raw) as Stored) : { v: 0, t: 0, s: NEW_STATE };
  }

  /** Saves `next` over the version read (`read`); 1 saved, 0 moved meanwhile, 2 the check-in was applied before. */
  async function save(m: MonitorRef, read: Stored, next: Stored, checkIn: string): Promise<number> {
    const k = keys(m.project);
    const now = Date.now();
    // listed for the clock before its first state is saved: a crash between leaves a listed project, not a lost one
    if (read.v === 0) await redis.sadd(projectsKey, String(m.project));
    const due = dueAt(next.s);
    return r.saveMonitor(k.mon, k.due, k.seen, k.out, fieldOf(m), read.v, JSON.stringify(next), due ?? '', checkIn, now, now - SEEN_MS, next.o?.length ? 'o' : '');
  }

  /**
   * Reads the state, moves it by `move` and saves it if no one saved meanwhile (else reads again); `applied` is
   * what moved it (a stored check-in's id, or the clock's minute). What the move changed beyond the state joins its
   * outbox in the same save. Answers the move and the outbox to deliver (then `settle`), or null when it was applied
   * before (or `move` answered null: nothing to do).
   */
  async function update(m: MonitorRef, applied: { checkIn: string } | { minute: number }, move: (state: MonitorEnvState) => Applied | null): Promise<{ moved: Applied; outbox: MonitorOutboxItem[] } | null> {
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      const stored = await read(m);
      if ('minute' in applied && stored.t >= applied.minute) return null;
      const moved = move(stored.s);
      if (!moved) return null;
      const key = 'checkIn' in applied ? applied.checkIn : `m:${applied.minute}`;
      const item = moved.records.length || moved.effects.length ? [{ key, records: moved.records, effects: moved.effects }] : [];
      const outbox = [...(stored.o ?? []), ...item];
      const next: Stored = { v: stored.v + 1, t: 'minute' in applied ? applied.minute : stored.t, s: moved.state, ...(outbox.length ? { o: outbox } : {}) };
      const code = await save(m, stored, next, 'checkIn' in applied ? applied.checkIn : '');
      if (code === 1) return { moved, outbox };
      if (code === 2) return null;
    }
    throw new Error(`monitor ${m.slug} (${m.environment}) of project ${m.project}: ${MAX_TRIES} saves met another writer`);
  }

  /** The outbox items named are delivered: they leave the state's outbox (others added meanwhile stay). */
  async function settle(m: MonitorRef, delivered: string[]): Promise<void> {
    if (delivered.length === 0) return;
    const done = new Set(delivered);
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      const stored = await read(m);
      if (!stored.o?.some((i) => done.has(i.key))) return;
      const outbox = stored.o.filter((i) => !done.has(i.key));
      const { o: _o, ...rest } = stored;
      if ((await save(m, stored, { ...rest, v: stored.v + 1, ...(outbox.length ? { o: outbox } : {}) }, '')) === 1) return;
    }
    throw new Error(`monitor ${m.slug} (${m.environment}) of project ${m.project}: ${MAX_TRIES} saves met another writer`);
  }

  return {
    read: async (m: MonitorRef) => (await read(m)).s,
    update,
    settle,
    /** A project's monitors' environments and their states, by slug, in one read. */
    async environments(project: number): Promise<Map<string, { environment: string; state: MonitorEnvState }[]>> {
      const bySlug = new Map<string, { environment: string; state: MonitorEnvState }[]>();
      const fields = Object.entries(await redis.hgetall(keys(project).mon)).sort(([a], [b]) => a.localeCompare(b));
      for (const [field, raw] of fields) {
        const { slug, environment } = refOf(field);
        bySlug.set(slug, [...(bySlug.get(slug) ?? []), { environment, state: (JSON.parse(raw) as Stored).s }]);
      }
      return bySlug;
    },
    /** A project's monitor environments. */
    refs: async (project: number) => (await redis.hkeys(keys(project).mon)).map(refOf),
    /** Forgets a monitor's every environment (a monitor removed). */
    async forget(project: number, slug: string): Promise<void> {
      const k = keys(project);
      const fields = (await redis.hkeys(k.mon)).filter((f) => refOf(f).slug === slug);
      if (fields.length) await redis.multi().hdel(k.mon, ...fields).zrem(k.due, ...fields).zrem(k.out, ...fields).exec();
    },
    /** A project's monitor environments whose outbox was last added to before `before` (ms), with it: left by a worker that died. */
    async unsettled(project: number, before: number, limit: number): Promise<{ ref: MonitorRef; outbox: MonitorOutboxItem[] }[]> {
      const out = [];
      for (const field of await redis.zrangebyscore(keys(project).out, '-inf', before, 'LIMIT', 0, limit)) {
        const ref = { project, ...refOf(field) };
        const outbox = (await read(ref)).o ?? [];
        if (outbox.length) out.push({ ref, outbox });
      }
      return out;
    },
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
      return (await redis.zrangebyscore(keys(project).due, '-inf', at, 'LIMIT', 0, limit)).map(refOf);
    },
  };
}
export type MonitorsState = ReturnType<typeof makeMonitorsState>;
