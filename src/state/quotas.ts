/**
 * Each project's quota counts (src/domain/quotas.ts), shared by the API processes through Redis without a round trip
 * per request: a process decides from the totals Redis last gave it plus what it took since, and every `syncMs` adds
 * what it took to the window keys (INCRBY answers the new totals, other processes' included). A project can pass a
 * limit by what the other processes took within one sync (a quarter of a second; a project this process takes
 * nothing of is read again every two seconds), never by more.
 *
 * Under the project's hash tag:
 *   qt:<category>:<m|h|mo|s>:<index>   items taken in a minute, an hour, a month, a spike window (10 s)
 *   spike                               the spike holding the project now (hash: since, last, ceiling, refused),
 *                                       gone `SPIKE.calmMs` after its last refusal
 *   nr:spike                            the mark that lets one project.spike notification out per spike
 */
import type { TriggerRecord } from '../domain/notifications.ts';
import { quotaVerdict, SPIKE, spikeCeiling, usualPerHour, windowIndex, type QuotaCategory, type Quotas, type QuotaVerdict } from '../domain/quotas.ts';
import type { RedisClient } from '../redis/connect.ts';
import { defineScripts, projectKeys } from './scripts.ts';

const WINDOWS = [
  { name: 'minute', key: 'm', ttlMs: 2 * 60_000 },
  // kept a day and more: the last 24 complete hours are a project's usual rate
  { name: 'hour', key: 'h', ttlMs: 26 * 3_600_000 },
  { name: 'month', key: 'mo', ttlMs: 33 * 86_400_000 },
  { name: 'spike', key: 's', ttlMs: 60_000 },
] as const;

interface Count {
  key: string;
  ttlMs: number;
  /** the total Redis last answered, and when */
  known: number;
  knownAt: number;
  /** taken here since, not yet added in Redis (and being added, or to be added again after a failed sync) */
  local: number;
  adding: number;
}

/** A count nothing was taken into here is read again this often, to learn what the other API processes took. */
const RELEARN_MS = 2000;

interface ProjectState {
  counts: Map<string, Count>;
  /** the usual error events per hour, as of the hour `hour` */
  usual: { hour: number; perHour: number } | null;
  /** spike refusals since the last sync, and the ceiling they met */
  spikeRefused: number;
  ceiling: number;
}

export interface SpikeState {
  since: string;
  last: string;
  /** error events taken per 10 s while it lasts */
  ceiling_per_10s: number;
  refused: number;
}

export function makeQuotaCounter(redis: RedisClient, opts: { prefix: string; spikeFloorPerMinute: number; syncMs?: number; onNotified?: (project: number) => void }) {
  defineScripts(redis); // raiseNotice, queued on the sync pipeline
  const projects = new Map<number, ProjectState>();
  const base = (project: number) => projectKeys(opts.prefix, project).base;

  function stateOf(project: number): ProjectState {
    let s = projects.get(project);
    if (!s) projects.set(project, (s = { counts: new Map(), usual: null, spikeRefused: 0, ceiling: 0 }));
    return s;
  }

  /** The count of one window for `at`, made when first needed (its total learnt at the next sync). */
  function countOf(project: number, s: ProjectState, category: QuotaCategory, window: (typeof WINDOWS)[number], at: number): Count {
    const key = `${base(project)}qt:${category}:${window.key}:${windowIndex(window.name, at)}`;
    let c = s.counts.get(key);
    if (!c) s.counts.set(key, (c = { key, ttlMs: window.ttlMs, known: 0, knownAt: 0, local: 0, adding: 0 }));
    return c;
  }

  /** One sync at a time: a second one meanwhile would count what the first is adding as added. */
  let syncing: Promise<void> | null = null;
  function sync(): Promise<void> {
    syncing ??= syncOnce().finally(() => (syncing = null));
    return syncing;
  }

  async function syncOnce(): Promise<void> {
    const now = Date.now();
    const hour = windowIndex('hour', now);
    for (const [project, s] of projects) {
      // what was taken here, and what was not read for a while
      const live = [...s.counts.values()].filter((c) => c.local > 0 || c.adding > 0 || now - c.knownAt >= RELEARN_MS);
      const pipe = redis.pipeline();
      for (const c of live) {
        c.adding += c.local;
        c.local = 0;
        pipe.incrby(c.key, c.adding);
        pipe.pexpire(c.key, c.ttlMs);
      }
      const learnUsual = s.usual?.hour !== hour;
      const pastHours = Array.from({ length: SPIKE.usualHours }, (_, i) => `${base(project)}qt:error:h:${hour - 1 - i}`);
      if (learnUsual) pipe.mget(...pastHours);
      const refused = s.spikeRefused;
      s.spikeRefused = 0;
      if (refused > 0) spikeWrites(pipe, project, s.ceiling, refused, now);
      const results = pipe.length > 0 ? ((await pipe.exec()) ?? []) : [];
      live.forEach((c, i) => {
        const [err, total] = results[2 * i] ?? [];
        if (err) return; // added again at the next sync
        c.known = Number(total); // what this process took meanwhile is in `local`, on top
        c.knownAt = now;
        c.adding = 0;
      });
      if (learnUsual) {
        const [, values] = results[2 * live.length] ?? [];
        if (Array.isArray(values)) s.usual = { hour, perHour: usualPerHour(values.map((v) => Number(v ?? 0))) };
      }
      if (refused > 0) {
        const raised = results.at(-1)?.[1];
        if (raised === 1) opts.onNotified?.(project);
      }
      // windows that ended are forgotten; a project quiet for a while is forgotten too
      for (const c of s.counts.values()) {
        if (c.local === 0 && c.adding === 0 && !isCurrent(c.key, now)) s.counts.delete(c.key);
      }
      if (s.counts.size === 0 && s.spikeRefused === 0) projects.delete(project);
    }
  }

  /** A spike's state for the ingestion panel, and its notification: one per spike (the mark lasts while it does). */
  function spikeWrites(pipe: ReturnType<RedisClient['pipeline']>, project: number, ceiling: number, refused: number, now: number): void {
    const key = `${base(project)}spike`;
    pipe.hsetnx(key, 'since', String(now));
    pipe.hset(key, 'last', String(now), 'ceiling', String(ceiling));
    pipe.hincrby(key, 'refused', refused);
    pipe.pexpire(key, SPIKE.calmMs);
    pipe.pexpire(`${base(project)}nr:spike`, SPIKE.calmMs);
    const trigger: TriggerRecord = {
      event: 'project.spike',
      at: now,
      ceiling_per_minute: ceiling * (60_000 / SPIKE.windowMs),
      usual_per_hour: Math.round(stateOf(project).usual?.perHour ?? 0),
    };
    (pipe as unknown as { raiseNotice(...a: (string | number)[]): unknown }).raiseNotice(`${base(project)}nr:spike`, `${base(project)}nq`, SPIKE.calmMs, JSON.stringify(trigger));
  }

  function decide(project: number, quotas: Quotas, category: QuotaCategory, n: number, now: number, count: boolean): QuotaVerdict {
    const s = stateOf(project);
    const counts = Object.fromEntries(
      WINDOWS.filter((w) => w.name !== 'spike' || category === 'error').map((w) => [w.name, countOf(project, s, category, w, now)]),
    ) as Record<'minute' | 'hour' | 'month', Count> & { spike?: Count };
    const total = (c: Count | undefined) => (c ? c.known + c.local + c.adding : 0);
    const ceiling = spikeCeiling(s.usual?.perHour ?? 0, opts.spikeFloorPerMinute);
    const verdict = quotaVerdict({ minute: total(counts.minute), hour: total(counts.hour), month: total(counts.month), spike: total(counts.spike) }, quotas, category, n, now, ceiling);
    if (verdict.admit && count) for (const c of Object.values(counts)) c.local += n;
    else if (!verdict.admit && verdict.reason === 'spike') {
      s.spikeRefused += n;
      s.ceiling = ceiling;
    }
    return verdict;
  }

  const timer = setInterval(() => void sync().catch(() => {}), opts.syncMs ?? 250);
  timer.unref();

  return {
    /**
     * Whether the project takes `n` more items of the category now; taken ones are counted at once (here) and in
     * Redis at the next sync.
     */
    take: (project: number, quotas: Quotas, category: QuotaCategory, n: number, now = Date.now()) => decide(project, quotas, category, n, now, true),
    /** Whether one more item would be taken now, counting nothing (a refusal before the body is read). */
    peek: (project: number, quotas: Quotas, category: QuotaCategory, now = Date.now()) => decide(project, quotas, category, 1, now, false),

    /** The spike holding the project now, if any. */
    async spike(project: number): Promise<SpikeState | null> {
      const h = await redis.hgetall(`${base(project)}spike`);
      if (!h.since) return null;
      const iso = (ms: string | undefined) => new Date(Number(ms)).toISOString();
      return { since: iso(h.since), last: iso(h.last), ceiling_per_10s: Number(h.ceiling ?? 0), refused: Number(h.refused ?? 0) };
    },

    sync,
    async close(): Promise<void> {
      clearInterval(timer);
      await sync().catch(() => {});
    },
  };
}
export type QuotaCounter = ReturnType<typeof makeQuotaCounter>;

/** Whether a count's key is of a window that holds `now` (the index is the key's last part). */
function isCurrent(key: string, now: number): boolean {
  const parts = key.split(':');
  const index = Number(parts.at(-1));
  const window = ({ m: 'minute', h: 'hour', mo: 'month', s: 'spike' } as const)[parts.at(-2) as 'm' | 'h' | 'mo' | 's'];
  return windowIndex(window, now) === index;
}
