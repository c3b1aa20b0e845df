/**
 * What the traces pipeline keeps in Redis (issue 69), under each project's prefix: the transaction names it has
 * admitted (`tnames`, capped: later names are counted under one overflow group), the slowest durations of each
 * group in the hour (`tslow:<hour>`) and the bytes of samples kept today (`tbytes:<day>`). All three are decided
 * in one script call per project and job (sample-traces-3.lua). Losing them costs nothing counted: names are
 * admitted again, and an hour's slowest are chosen again from what comes next.
 *
 * And the index that lets the trace page and the Logs page read by `_id` (FerretDB v1 scans a whole collection for an
 * `_id` range): log chunks and trace-error documents are numbered per project and minute (`<project>:<minute>:<n>`;
 * `tl:<day>`/`te:<day>` hold each minute's count, `tlg:<minute>`/`teg:<minute>` the number given to each group so a
 * job run again writes the same ids), and each sample is listed under its trace (`tsx:<day>`, members
 * `<trace>:<span>`, read by lexical range). `tix` says since when the index is whole; what is older (stored before
 * it, or before Redis lost it) is read as before, by range.
 *
 * `tgen` counts the rewrites of a project's settled performance buckets, so the API processes may keep them between
 * reads (src/services/perf-bucket-cache.ts); losing it with Redis costs a stale read until each kept bucket's
 * minutes run out.
 */
import type { RedisClient } from '../redis/connect.ts';
import { defineScripts, projectKeys } from './scripts.ts';

/** A transaction the sampler weighs: its group, duration and packed size, and whether it must be kept (failed, drawn). */
export interface SampleCandidate {
  group: string;
  duration: number;
  bytes: number;
  must: boolean;
}

export type SampleDecision = 'counted' | 'sample' | 'over_budget';
const DECISIONS: Record<number, SampleDecision> = { 0: 'counted', 1: 'sample', 2: 'over_budget' };

export interface SampleLimits {
  slowestPerHour: number;
  bytesPerDay: number;
  maxNames: number;
}

/** What the index numbers: log chunks or trace-error documents. */
export type Numbered = 'tl' | 'te';

const DAY_MS = 86_400_000;
const MINUTE = 60_000;

export function makeTracesState(redis: RedisClient, prefix: string, keep: { logDays: number; sampleDays: number } = { logDays: 30, sampleDays: 14 }) {
  const scripts = defineScripts(redis);
  const base = (project: number) => projectKeys(prefix, project).base;
  const ttl = (days: number) => (days + 2) * 86_400;
  return {
    /**
     * The number of each (minute, group) in its minute, the same for a group numbered before (a retried job): its
     * document is `<project>:<minute>:<n>`. A number taken by a writer that lost the race to name the group is skipped.
     */
    async number(kind: Numbered, project: number, wanted: { minute: number; group: string }[], now: number): Promise<number[]> {
      if (wanted.length === 0) return [];
      const b = base(project);
      const given = (minute: number) => `${b}${kind}g:${minute / MINUTE}`;
      const counts = (minute: number) => `${b}${kind}:${Math.floor(minute / DAY_MS)}`;
      const answers = async (pipe: ReturnType<RedisClient['pipeline']>) => ((await pipe.exec()) ?? []).map(([err, v]) => {
        if (err) throw err;
        return v;
      });
      // four round trips for the whole job: the numbers given before, new ones taken, given (first writer wins), read back
      const known = await answers(wanted.reduce((p, w) => p.hget(given(w.minute), w.group), redis.pipeline()));
      const fresh = wanted.flatMap((w, i) => (known[i] === null ? [i] : []));
      if (fresh.length > 0) {
        const taken = await answers(fresh.reduce((p, i) => p.hincrby(counts(wanted[i]!.minute), String(wanted[i]!.minute / MINUTE), 1), redis.pipeline()));
        const pipe = redis.pipeline();
        fresh.forEach((i, k) => {
          const w = wanted[i]!;
          pipe.hsetnx(given(w.minute), w.group, String(taken[k])).expire(given(w.minute), 86_400).expire(counts(w.minute), ttl(keep.logDays));
        });
        const set = await answers(pipe.set(`${b}tix`, String(now), 'NX'));
        fresh.forEach((i, k) => (known[i] = set[3 * k] === 1 ? taken[k] : null));
        // a group another delivery numbered meanwhile keeps that number (the one taken here is skipped)
        const lost = fresh.filter((i) => known[i] === null);
        const reread = lost.length ? await answers(lost.reduce((p, i) => p.hget(given(wanted[i]!.minute), wanted[i]!.group), redis.pipeline())) : [];
        lost.forEach((i, k) => (known[i] = reread[k]));
      }
      return known.map(Number);
    },

    /** How many documents each minute of [from, to) (ms, whole minutes) has had numbered; minutes with none are left out. */
    async counts(kind: Numbered, project: number, from: number, to: number): Promise<Map<number, number>> {
      const b = base(project);
      const pipe = redis.pipeline();
      for (let d = Math.floor(from / DAY_MS); d <= Math.floor((to - 1) / DAY_MS); d++) pipe.hgetall(`${b}${kind}:${d}`);
      const out = new Map<number, number>();
      for (const [, fields] of (await pipe.exec()) ?? []) {
        for (const [minute, n] of Object.entries((fields ?? {}) as Record<string, string>)) {
          const at = Number(minute) * MINUTE;
          if (at >= from && at < to) out.set(at, Number(n));
        }
      }
      return out;
    },

    /** Lists kept samples under their trace, in the day they were received. */
    async indexSamples(project: number, samples: { trace: string; span: string }[], now: number): Promise<void> {
      if (samples.length === 0) return;
      const b = base(project);
      const key = `${b}tsx:${Math.floor(now / DAY_MS)}`;
      await redis
        .multi()
        .zadd(key, ...samples.flatMap((s) => [0, `${s.trace}:${s.span}`]))
        .expire(key, ttl(keep.sampleDays))
        .set(`${b}tix`, String(now), 'NX')
        .exec();
    },

    /** The span ids of a trace's kept samples, received within the sample retention. */
    async samplesOf(project: number, trace: string, now: number): Promise<string[]> {
      const b = base(project);
      const today = Math.floor(now / DAY_MS);
      const pipe = redis.pipeline();
      for (let d = today - keep.sampleDays - 1; d <= today; d++) pipe.zrangebylex(`${b}tsx:${d}`, `[${trace}:`, `[${trace};`);
      const spans = ((await pipe.exec()) ?? []).flatMap(([, members]) => (members as string[]).map((m) => m.slice(trace.length + 1)));
      return [...new Set(spans)];
    },

    /** Since when (ms) the index is whole for the project; null when it has nothing yet. */
    async indexedSince(project: number): Promise<number | null> {
      const since = await redis.get(`${base(project)}tix`);
      return since === null ? null : Number(since);
    },

    /**
     * The generation of a project's settled buckets (`tgen`): performance reads keep the settled buckets they read
     * under it, and it goes up whenever one is rewritten or forgotten (src/domain/perf-buckets.ts, `splitSettled`).
     */
    bucketsGeneration: async (project: number): Promise<string> => (await redis.get(`${base(project)}tgen`)) ?? '0',
    /** Raises the generation of each project's settled buckets, after they were rewritten or forgotten. */
    async bucketsChanged(projects: Iterable<number>): Promise<void> {
      await Promise.all([...projects].map((project) => redis.incr(`${base(project)}tgen`)));
    },

    /** Which of `names` are admitted, and each candidate's decision, in order. */
    async decide(project: number, now: Date, names: string[], candidates: SampleCandidate[], limits: SampleLimits): Promise<{ admitted: Set<string>; decisions: SampleDecision[] }> {
      const { base } = projectKeys(prefix, project);
      const hour = Math.floor(now.getTime() / 3_600_000);
      const day = Math.floor(hour / 24);
      const [admitted, decisions] = await scripts.sampleTraces(
        `${base}tslow:${hour}`,
        `${base}tbytes:${day}`,
        `${base}tnames`,
        limits.slowestPerHour,
        limits.bytesPerDay,
        limits.maxNames,
        names.length,
        ...names,
        ...candidates.flatMap((c) => [c.group, Math.round(c.duration), c.bytes, c.must ? 1 : 0]),
      );
      return {
        admitted: new Set(names.filter((_, i) => admitted[i] === 1)),
        decisions: decisions.map((d) => {
          const decision = DECISIONS[d];
          if (!decision) throw new Error(`sample-traces answered ${d}, which it never should`);
          return decision;
        }),
      };
    },
  };
}
export type TracesState = ReturnType<typeof makeTracesState>;
