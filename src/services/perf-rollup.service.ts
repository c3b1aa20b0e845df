/**
 * The performance rollup (issue 69): every two seconds, one worker at a time (a lease) merges the parts the
 * `traces.process` jobs wrote into each project's minutes, then sums closed hours from their minutes and closed
 * days from their hours, so a window of any length reads a few dozen buckets.
 *
 * A part is merged only once its group has left `trace_raw` (its job is done: a retry can no longer write it
 * again). A minute's write lists the parts it merged (`merged`); they are deleted after it, and a merge that was cut
 * off between the two finds them listed and deletes them without counting them again. An hour or a day is
 * recomputed whole from what it sums, so writing it twice changes nothing; a part that arrives for an hour already
 * summed has that hour (and its day) summed again, noted in the store before the minute is written so a pass cut
 * off between the two leaves the note to the next. A pass that rewrote a settled bucket (src/domain/perf-buckets.ts,
 * `rewriteNoted`), and retention when it forgets some, raise the project's generation after the writes, so readers
 * keeping settled buckets read them again.
 *
 * Retention (the hourly maintenance job): minutes after MINUTE_DAYS (two weeks), hours and days after
 * PERF_RETENTION_DAYS, samples after TRACE_SAMPLE_RETENTION_DAYS, log lines after LOG_RETENTION_DAYS.
 */
import { MINUTE_MS, mergeBuckets, rewriteNoted, sumBuckets } from '../domain/perf-buckets.ts';
import type { Logger } from '../log.ts';
import type { RedisClient } from '../redis/connect.ts';
import { takeLease } from '../state/lease.ts';
import { DAY_MS, HOUR_MS, timeKey, timeOfKey, type TracesStore } from '../store/traces.store.ts';
import type { Config } from '../../config/index.ts';
import { makeTicker } from '../util/ticker.ts';
import { groupBy } from '../util/group-by.ts';

/** Days a minute is kept; older windows read hours. */
export const MINUTE_DAYS = 14;
/** How long after an hour ends it is summed: its last parts have been merged by then. */
const SETTLE_MS = 2 * 60_000;
/** Parts merged in one pass at most. */
const PASS_PARTS = 5000;
const LEASE_MS = 60_000;
/** Periods summed in one pass at most. */
const ROLL_PER_PASS = 48;

export function makePerfRollup(deps: {
  store: TracesStore;
  redis: RedisClient;
  prefix: string;
  projectIds: () => Promise<number[]>;
  /** raises the generation of these projects' settled buckets (readers keep them under it) */
  changed: (projects: Iterable<number>) => Promise<void>;
  log: Logger;
  config: Pick<Config, 'traces'>;
}) {
  const { store, log } = deps;
  const leaseKey = `${deps.prefix.replace(/[{}]/g, '')}:perf-rollup`;

  /**
   * Merges ready parts into their minutes; an hour already summed that a minute's write changes is noted to be
   * summed again before that write (a pass cut off after it finds the note). Answers the projects with a settled
   * minute rewritten (a part that came late).
   */
  async function mergeParts(rolledHours: number, now: number): Promise<Set<number>> {
    const pending = await store.pendingParts(PASS_PARTS);
    const groupOf = (id: string) => id.split(':')[2]!;
    const unapplied = new Set((await store.ofGroupIds([...new Set(pending.map((p) => groupOf(p._id)))])).map(String));
    const ready = pending.filter((p) => !unapplied.has(groupOf(p._id)));
    const noted = new Set<number>();
    for (const [minuteId, parts] of groupBy(ready, (p) => p._id.split(':').slice(0, 2).join(':'))) {
      const existing = await store.bucket('minute', minuteId);
      const before = new Set(existing?.merged ?? []);
      if (before.size) await store.deleteParts([...before]); // merged by a pass cut off before its delete
      const fresh = parts.filter((p) => !before.has(p._id));
      if (fresh.length === 0) continue;
      const b = fresh.reduce((sum, p) => mergeBuckets(sum, p.b), existing?.b ?? {});
      const merged = fresh.map((p) => p._id);
      const project = Number(minuteId.split(':')[0]);
      const hour = Math.floor(timeOfKey(minuteId) / HOUR_MS) * HOUR_MS;
      if (hour + HOUR_MS <= rolledHours) await store.noteResum(project, hour);
      await store.saveBucket('minute', { _id: minuteId, b, merged });
      await store.deleteParts(merged);
      if (rewriteNoted(timeOfKey(minuteId) + MINUTE_MS, now)) noted.add(project);
    }
    return noted;
  }

  /** Sums a project's hour (or day) from its minutes (or hours); an empty one is not written. */
  async function sum(period: 'hour' | 'day', project: number, start: number): Promise<void> {
    const [from, length] = period === 'hour' ? (['minute', HOUR_MS] as const) : (['hour', DAY_MS] as const);
    const parts = await store.bucketsIn(from, project, start, start + length);
    if (parts.length) await store.saveBucket(period, { _id: timeKey(project, start), b: sumBuckets(parts.map((p) => p.b)) });
  }

  /**
   * Sums the closed periods not summed yet, ROLL_PER_PASS at most (after a stop of days, it catches up over a few
   * passes); answers how far they are summed.
   */
  async function roll(period: 'hour' | 'day', upTo: number): Promise<number> {
    const length = period === 'hour' ? HOUR_MS : DAY_MS;
    const closed = Math.floor(upTo / length) * length;
    let until = await store.rolledUntil(period);
    // never summed: a fresh store, or one from before traces were kept; nothing older than the last period to sum
    if (until === 0) until = closed - length;
    if (until >= closed) return until;
    const projects = await deps.projectIds();
    const end = Math.min(closed, until + ROLL_PER_PASS * length);
    for (let start = until; start < end; start += length) {
      for (const project of projects) await sum(period, project, start);
      await store.setRolledUntil(period, start + length);
    }
    return end;
  }

  async function pass(now: Date): Promise<void> {
    const lease = await takeLease(deps.redis, leaseKey, LEASE_MS);
    if (!lease) return;
    try {
      const noted = await mergeParts(await store.rolledUntil('hour'), now.getTime());
      // the hours noted, by this pass or one cut off, summed again with their days
      const resums = await store.resumsNoted();
      for (const [project, hours] of groupBy(resums, (r) => r.project)) {
        const days = new Set<number>();
        for (const { hour } of hours) {
          await sum('hour', project, hour);
          days.add(Math.floor(hour / DAY_MS) * DAY_MS);
        }
        const daysRolled = await store.rolledUntil('day');
        for (const day of days) if (day + DAY_MS <= daysRolled) await sum('day', project, day);
        noted.add(project);
      }
      // after the writes: a reader that kept the old bucket under the old generation reads it again
      await deps.changed(noted);
      for (const r of resums) await store.resumDone(r.project, r.hour);
      const hours = await roll('hour', now.getTime() - SETTLE_MS);
      await roll('day', hours);
    } finally {
      await lease.end();
    }
  }

  return {
    pass,
    /** Runs a pass every `everyMs` until stopped. */
    start(everyMs = 2000) {
      const ticker = makeTicker(() => pass(new Date()), (err) => log.warn({ err: err.message }, 'performance rollup failed; the next pass tries again'), everyMs);
      ticker.start();
      return ticker;
    },
    /** Deletes what is past its retention, per project; the counts deleted. */
    async expire(now: Date): Promise<Record<string, number>> {
      const { traces } = deps.config;
      const t = now.getTime();
      const out = { perf_minutes: 0, perf_hours: 0, perf_days: 0, log_chunks: 0, trace_errors: 0, trace_samples: 0 };
      const forgot = new Set<number>();
      for (const project of await deps.projectIds()) {
        const minutes = await store.forgetBuckets('minute', project, t - MINUTE_DAYS * DAY_MS);
        const hours = await store.forgetBuckets('hour', project, t - traces.aggregateDays * DAY_MS);
        const days = await store.forgetBuckets('day', project, t - traces.aggregateDays * DAY_MS);
        out.perf_minutes += minutes;
        out.perf_hours += hours;
        out.perf_days += days;
        if (minutes + hours + days > 0) forgot.add(project);
        out.log_chunks += await store.forgetLogs(project, t - traces.logDays * DAY_MS);
        out.trace_errors += await store.forgetTraceErrors(project, t - traces.sampleDays * DAY_MS);
      }
      out.trace_samples = await store.forgetSamples(new Date(t - traces.sampleDays * DAY_MS));
      await deps.changed(forgot);
      return out;
    },
  };
}
export type PerfRollup = ReturnType<typeof makePerfRollup>;
