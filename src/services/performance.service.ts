/**
 * Reading traces and logs (issue 69): the Performance list, a transaction group's page, web vitals per page, one
 * trace joined across its transactions, errors and log lines, and the log search. Every figure of a window comes
 * from its buckets (src/domain/perf-buckets.ts): whole days and hours where they are summed, minutes (and the
 * parts not merged yet, so a transaction counts within seconds) for the rest; the settled ones as this process
 * kept them (src/services/perf-bucket-cache.ts).
 */
import { apdex, bucketHigh, quantile, VITAL_NAMES, vitalP75, type Histogram, type Vital } from '../domain/perf-math.ts';
import { emptyCounts, groupKeyOf, mergeCounts, splitSettled, windowReads, type Bucket, type BucketRange, type GroupCounts, type GroupParts } from '../domain/perf-buckets.ts';
import type { LogRecord } from '../domain/logs.ts';
import { makeBucketCache } from './perf-bucket-cache.ts';
import { cachedFor } from '../util/cached.ts';
import type { TransactionRecord } from '../domain/transactions.ts';
import type { Numbered, TracesState } from '../state/traces.state.ts';
import { unpackJson } from '../store/packing.ts';
import { DAY_MS, MINUTE_MS, PERIOD_MS, timeKey, timeOfKey, type BucketRead, type TracesStore } from '../store/traces.store.ts';

/** A window of time, ms: [from, to). */
export interface Window {
  from: number;
  to: number;
}

export interface GroupFilter {
  environment?: string;
  release?: string;
}

/** A bucket of the window with the time it starts and how long it covers. */
interface Slice {
  start: number;
  length: number;
  b: Bucket;
}

/** How long a process goes by how far the hours and days were summed before it asks again. */
const ROLLED_READ_MS = 10_000;
/** Points in a sparkline or a chart. */
const POINTS = 30;
/** Most log lines one search answers; most chunks it reads. */
const LOG_PAGE = 200;
const LOG_CHUNKS_READ = 400;
/** A window read through the index starts this long after the index began (a line may be filed up to 5 minutes ahead). */
const INDEX_MARGIN_MS = 10 * MINUTE_MS;

export function makePerformanceService(deps: { store: TracesStore; index: Pick<TracesState, 'counts' | 'samplesOf' | 'indexedSince' | 'bucketsGeneration'>; apdexMs: number; sampleDays: number }) {
  const { store, index } = deps;
  const kept = makeBucketCache(store);
  // an older answer only has a window read its last summed hour (or day) as the minutes (or hours) it sums, which stay
  const rolledUntil = cachedFor(ROLLED_READ_MS, (period: 'hour' | 'day') => store.rolledUntil(period));

  /**
   * The ids of the numbered documents (log chunks, trace errors) of the minutes of [from, to), newest minute first and,
   * within a minute, newest first; `limit` at most. Null when the index does not cover the window (it began later,
   * or Redis lost it): the caller reads by `_id` range instead.
   */
  async function numberedIds(kind: Numbered, project: number, from: number, to: number, limit = Infinity): Promise<string[] | null> {
    const since = await index.indexedSince(project);
    if (since === null || from < since + INDEX_MARGIN_MS) return null;
    const first = Math.floor(from / MINUTE_MS) * MINUTE_MS;
    const counts = await index.counts(kind, project, first, to);
    const ids: string[] = [];
    for (const minute of [...counts.keys()].sort((a, b) => b - a)) {
      for (let n = counts.get(minute)!; n >= 1 && ids.length < limit; n--) ids.push(`${timeKey(project, minute)}:${n}`);
    }
    return ids;
  }

  /** A trace's samples: by their ids from the index, or by `_id` range where the index may not hold them. */
  async function samplesOfTrace(project: number, traceId: string, now: number) {
    const spans = await index.samplesOf(project, traceId, now);
    if (spans.length > 0) return store.samplesOfSpans(project, traceId, spans);
    const since = await index.indexedSince(project);
    const whole = since !== null && since <= now - deps.sampleDays * DAY_MS;
    return whole ? [] : store.samplesOfTrace(project, traceId);
  }

  /**
   * The window's buckets: whole summed days, then whole summed hours, then minutes and unmerged parts, all read at
   * once; `spans` whether the span groups are wanted (a group's page) or only the counts (the lists).
   */
  async function slices(project: number, w: Window, read: BucketRead = { spans: false }): Promise<Slice[]> {
    const now = Date.now();
    const [hoursRolled, daysRolled, generation] = await Promise.all([rolledUntil('hour'), rolledUntil('day'), index.bucketsGeneration(project)]);
    const reads = windowReads(w, hoursRolled, daysRolled).flatMap((r) => {
      const { settled, fresh } = splitSettled(r, PERIOD_MS[r.period], now);
      return [...(settled ? [keptSlices(project, settled, read, generation)] : []), ...(fresh ? [r.period === 'minute' ? minuteSlices(project, fresh, read) : summedSlices(project, fresh, read)] : [])];
    });
    return (await Promise.all(reads)).flat().sort((a, b) => a.start - b.start);
  }
  async function keptSlices(project: number, r: BucketRange, read: BucketRead, generation: string): Promise<Slice[]> {
    return (await kept.read(r.period, project, r.from, r.to, read, generation)).map((d) => ({ start: timeOfKey(d._id), length: PERIOD_MS[r.period], b: d.b }));
  }
  async function summedSlices(project: number, r: BucketRange, read: BucketRead): Promise<Slice[]> {
    return (await store.bucketsIn(r.period, project, r.from, r.to, read)).map((d) => ({ start: timeOfKey(d._id), length: PERIOD_MS[r.period], b: d.b }));
  }
  async function minuteSlices(project: number, r: BucketRange, read: BucketRead): Promise<Slice[]> {
    const [minutes, parts] = await Promise.all([store.bucketsIn('minute', project, r.from, r.to, read), store.partsIn(project, r.from, r.to, read)]);
    const out: Slice[] = minutes.map((m) => ({ start: timeOfKey(m._id), length: MINUTE_MS, b: m.b }));
    // a part merged between the two reads is counted twice for that one answer; a part a minute lists is not
    const listed = new Set(minutes.flatMap((m) => m.merged ?? []));
    for (const p of parts) if (!listed.has(p._id)) out.push({ start: timeOfKey(p._id), length: MINUTE_MS, b: p.b });
    return out;
  }

  /** Which of a window's group keys pass the filter, with their parts. */
  async function partsOf(project: number, keys: string[], filter: GroupFilter): Promise<Map<string, GroupParts>> {
    const names = await store.namesOf(project, 'g', keys);
    const out = new Map<string, GroupParts>();
    for (const [k, p] of names) {
      if (filter.environment !== undefined && p.environment !== filter.environment) continue;
      if (filter.release !== undefined && p.release !== filter.release) continue;
      out.set(k, p);
    }
    return out;
  }

  /** A group as lists show it: its name, op and method, across environments and releases. */
  const listKey = (p: GroupParts) => groupKeyOf({ environment: '', release: null, name: p.name, op: p.op, method: p.method });

  function figures(c: GroupCounts, w: Window) {
    const minutes = (w.to - w.from) / MINUTE_MS;
    return {
      count: c.n,
      estimated_count: Math.round(c.x),
      per_minute: c.n / minutes,
      failures: c.e,
      failure_rate: c.n ? c.e / c.n : null,
      avg_ms: c.n ? c.s / c.n : null,
      p50_ms: quantile(c.h, 0.5),
      p75_ms: quantile(c.h, 0.75),
      p95_ms: quantile(c.h, 0.95),
      p99_ms: quantile(c.h, 0.99),
      apdex: apdex(c.h, deps.apdexMs),
      vitals: vitalsOf(c),
    };
  }

  /** Every group of the window with its figures and a sparkline, busiest first, and all of them together. */
  async function list(project: number, w: Window, filter: GroupFilter = {}) {
    const all = await slices(project, w);
    const keys = [...new Set(all.flatMap((s) => Object.keys(s.b)))];
    const parts = await partsOf(project, keys, filter);
    // a group's list key once per group, not once per bucket (a hash each: half the list's time at 30 days)
    const listKeys = new Map([...parts].map(([k, p]) => [k, listKey(p)]));
    const rows = new Map<string, { parts: GroupParts; counts: GroupCounts; spark: number[] }>();
    const total = emptyCounts();
    for (const s of all) {
      for (const [k, c] of Object.entries(s.b)) {
        const p = parts.get(k);
        if (!p) continue;
        const lk = listKeys.get(k)!;
        const row = rows.get(lk) ?? rows.set(lk, { parts: p, counts: emptyCounts(), spark: Array(POINTS).fill(0) }).get(lk)!;
        mergeCounts(row.counts, c);
        mergeCounts(total, c);
        row.spark[slotOf(w, s.start)]! += c.n;
      }
    }
    const groups = [...rows]
      .map(([key, r]) => ({ key, name: r.parts.name, op: r.parts.op, method: r.parts.method, ...figures(r.counts, w), sparkline: r.spark }))
      .filter((r) => r.count > 0 || Object.keys(r.vitals).length > 0)
      .sort((a, b) => b.count - a.count);
    return { groups, total: figures(total, w) };
  }

  return {
    slices,
    /** Every group of the window with its figures and a sparkline of its count, busiest first. */
    async groups(project: number, w: Window, filter: GroupFilter = {}) {
      return (await list(project, w, filter)).groups;
    },
    /** The groups, and every transaction of the window together (`total`: a release's p95 and failure rate). */
    list,

    /**
     * One group's page: its figures, percentiles over the window, its latency histogram, the span groups where its
     * time goes (with N+1 repeats), and its slowest samples. Null when the window holds none of it.
     */
    async group(project: number, key: string, w: Window, filter: GroupFilter = {}) {
      const all = await slices(project, w, { spans: true });
      const keys = [...new Set(all.flatMap((s) => Object.keys(s.b)))];
      const parts = await partsOf(project, keys, filter);
      const mine = new Set([...parts].filter(([, p]) => listKey(p) === key).map(([k]) => k));
      if (mine.size === 0) return null;
      const c = emptyCounts();
      const points = Array.from({ length: POINTS }, () => emptyCounts());
      for (const s of all) {
        for (const [k, counts] of Object.entries(s.b)) {
          if (!mine.has(k)) continue;
          mergeCounts(c, counts);
          mergeCounts(points[slotOf(w, s.start)]!, counts);
        }
      }
      const p = parts.get([...mine][0]!)!;
      const spanNames = await store.namesOf(project, 's', Object.keys(c.sp ?? {}));
      const spans = Object.entries(c.sp ?? {})
        .map(([sk, s]) => ({ op: spanNames.get(sk)?.op ?? 'other', description: spanNames.get(sk)?.description ?? '(other spans)', count: s.n, total_ms: s.t, per_transaction: c.n ? s.n / c.n : 0, share: c.s ? s.t / c.s : 0, n_plus_one: s.r }))
        .sort((a, b) => b.total_ms - a.total_ms);
      const samples = await store.samplesOfGroup(project, [...mine], new Date(w.from), 20);
      return {
        key,
        name: p.name,
        op: p.op,
        method: p.method,
        ...figures(c, w),
        histogram: histogramRows(c.h),
        chart: points.map((g, i) => {
          return { at: new Date(w.from + ((w.to - w.from) * i) / POINTS).toISOString(), count: g.n, p50_ms: quantile(g.h, 0.5), p95_ms: quantile(g.h, 0.95), failures: g.e };
        }),
        spans: spans.slice(0, 25),
        n_plus_one: spans.filter((s) => s.n_plus_one > 0 && s.op.startsWith('db')),
        samples: samples.filter((s) => s.at.getTime() < w.to).map((s) => ({ trace_id: s.trace_id, span_id: s._id.split(':')[2], at: s.at.toISOString(), duration_ms: s.duration, failed: s.failed })),
      };
    },

    /** Web vitals per page (the groups that carry them): p75 of each, and the share of good, needing improvement and poor. */
    async vitals(project: number, w: Window, filter: GroupFilter = {}) {
      const rows = await this.groups(project, w, filter);
      return rows.filter((r) => Object.keys(r.vitals).length > 0).map((r) => ({ key: r.key, page: r.name, op: r.op, vitals: r.vitals }));
    },

    /**
     * A trace: its sampled transactions (with their spans), the error events and the log lines that named it.
     * `at` (ms) says when to look for errors and lines when no transaction of it was sampled.
     */
    async trace(project: number, traceId: string, at?: number) {
      const samples = await samplesOfTrace(project, traceId, Date.now());
      const transactions = samples.map((s) => unpackJson<TransactionRecord>(s.data)).sort((a, b) => a.start - b.start);
      const times = transactions.flatMap((t) => [t.start, t.end]);
      if (at !== undefined) times.push(at);
      if (times.length === 0) return { trace_id: traceId, sampled: false, transactions: [], errors: [], logs: [] };
      const from = Math.floor((Math.min(...times) - 5 * MINUTE_MS) / MINUTE_MS) * MINUTE_MS;
      const to = Math.max(...times) + 5 * MINUTE_MS;
      const [errorIds, chunkIds] = await Promise.all([numberedIds('te', project, from, to), numberedIds('tl', project, from, to)]);
      const [errorDocs, chunks] = await Promise.all([
        errorIds ? store.traceErrors(errorIds) : store.traceErrorsIn(project, from, to),
        chunkIds ? store.logChunkTraces(chunkIds) : store.logChunkTracesIn(project, from, to),
      ]);
      const errors = errorDocs.flatMap((d) => d.x[traceId] ?? []);
      const short = traceId.slice(0, 8);
      const matching = chunks.filter((c) => c.traces.split(',').includes(short)).map((c) => c._id);
      const logs = (matching.length ? await store.logChunks(matching) : []).flatMap((c) => unpackJson<LogRecord[]>(c.data).filter((l) => l.trace_id === traceId)).sort((a, b) => a.t - b.t);
      return {
        trace_id: traceId,
        sampled: transactions.length > 0,
        transactions,
        errors: [...new Map(errors.map((e) => [e.id, e])).values()].sort((a, b) => a.at - b.at),
        logs,
      };
    },

    /** Log lines of the window, newest first: by level, by text in the body, by an attribute's value, by trace. */
    async logs(project: number, w: Window, q: { levels?: string[]; text?: string; attribute?: { key: string; value: string }; trace?: string; limit?: number }) {
      const limit = Math.min(q.limit ?? LOG_PAGE, LOG_PAGE);
      const from = Math.floor(w.from / MINUTE_MS) * MINUTE_MS;
      const ids = await numberedIds('tl', project, from, w.to, LOG_CHUNKS_READ);
      const chunks = ids ? (await store.logChunks(ids)).sort((a, b) => (a._id < b._id ? 1 : -1)) : await store.logChunksIn(project, from, w.to, LOG_CHUNKS_READ);
      const text = q.text?.toLowerCase();
      const out: LogRecord[] = [];
      for (const c of chunks) {
        if (q.trace && !c.traces.split(',').includes(q.trace.slice(0, 8))) continue;
        for (const line of unpackJson<LogRecord[]>(c.data)) {
          if (line.t < w.from || line.t >= w.to) continue;
          if (q.levels?.length && !q.levels.includes(line.level)) continue;
          if (q.trace && line.trace_id !== q.trace) continue;
          if (text && !line.body.toLowerCase().includes(text)) continue;
          if (q.attribute && String(line.attrs[q.attribute.key]) !== q.attribute.value) continue;
          out.push(line);
        }
      }
      out.sort((a, b) => b.t - a.t);
      return { lines: out.slice(0, limit), more: out.length > limit || chunks.length === LOG_CHUNKS_READ };
    },
  };
}
export type PerformanceService = ReturnType<typeof makePerformanceService>;

/** Which of the window's POINTS slices a time falls in (a sparkline's bar, a chart's point). */
function slotOf(w: Window, t: number): number {
  return Math.min(POINTS - 1, Math.max(0, Math.floor(((t - w.from) / (w.to - w.from)) * POINTS)));
}

function vitalsOf(c: GroupCounts): Partial<Record<Vital, { p75: number | null; good: number; meh: number; poor: number; count: number }>> {
  const out: Partial<Record<Vital, { p75: number | null; good: number; meh: number; poor: number; count: number }>> = {};
  for (const name of VITAL_NAMES) {
    const v = c.v?.[name];
    if (!v) continue;
    const count = v.good + v.meh + v.poor;
    out[name] = { p75: vitalP75(name, v), good: v.good / count, meh: v.meh / count, poor: v.poor / count, count };
  }
  return out;
}

/** A latency histogram as rows: each bucket's upper bound (ms) and its count, shortest first. */
function histogramRows(h: Histogram): { le_ms: number; count: number }[] {
  return Object.entries(h)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => ({ bucket: Number(k), n }))
    .sort((a, b) => a.bucket - b.bucket)
    .map(({ bucket, n }) => ({ le_ms: Math.round(bucketHigh(bucket) * 100) / 100, count: n }));
}
