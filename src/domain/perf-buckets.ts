/**
 * The aggregates performance pages read (issue 69), as pure functions: a project's minute (or hour, or day) is one
 * Bucket holding, per transaction group (environment, release, name, op, method), the count, the estimated count
 * (each transaction weighed by its trace's sample rate), the failures, the duration histogram, the web vitals and
 * the span groups (op and parameterised description) with their time and their N+1 repeats. A window's bucket is
 * the sum of its buckets (`mergeBuckets`), so every figure of any window comes from these.
 *
 * Groups and span groups are named by short hashes of their parts (a document's keys cannot hold any text); the
 * parts travel beside them (`GroupParts`, `SpanParts`) and are kept once per project.
 */
import crypto from 'node:crypto';
import { addHistogram, addVital, bucketOf, mergeVital, type Histogram, type Vital, type VitalCounts } from './perf-math.ts';
import { spanGroupDescription } from './parameterize.ts';
import type { TransactionRecord } from './transactions.ts';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** One read of a window's buckets: summed days or hours, or minutes (with the parts not merged into them yet). */
export interface BucketRange {
  period: 'day' | 'hour' | 'minute';
  from: number;
  to: number;
}

/**
 * The reads that cover a window [from, to) once: the whole days in it up to the last day summed, the whole hours
 * of what is left up to the last hour summed, and minutes for the rest. Each can be read at once.
 */
export function windowReads(w: { from: number; to: number }, hoursRolled: number, daysRolled: number): BucketRange[] {
  const out: BucketRange[] = [];
  /** what is left of [from, to) once `period`'s whole buckets in [first, last) are read: its two edges */
  const around = (period: BucketRange['period'], from: number, to: number, first: number, last: number): [number, number][] => {
    if (last <= first) return [[from, to]];
    out.push({ period, from: first, to: last });
    return [
      [from, first],
      [last, to],
    ];
  };
  const days = around('day', w.from, w.to, Math.ceil(w.from / DAY_MS) * DAY_MS, Math.min(Math.floor(w.to / DAY_MS), Math.floor(daysRolled / DAY_MS)) * DAY_MS);
  for (const [from, to] of days) {
    if (to <= from) continue;
    const hours = around('hour', from, to, Math.ceil(from / HOUR_MS) * HOUR_MS, Math.min(Math.floor(to / HOUR_MS) * HOUR_MS, hoursRolled));
    for (const [mFrom, mTo] of hours) if (mTo > mFrom) out.push({ period: 'minute', from: mFrom, to: mTo });
  }
  return out;
}

/**
 * Which buckets a reader keeps between reads: those that ended SETTLED_MS or more before its clock. Such a bucket
 * changes only when a transaction arrives late for it (an SDK sending hours later, a backlog applied after the
 * workers were down) or when retention forgets it, and whoever rewrites or forgets a bucket that ended
 * NOTED_AFTER_MS before its own clock raises the project's generation, under which readers keep what they read. The
 * gap between the two lets the reader's and the writer's clocks differ by eight minutes.
 */
export const SETTLED_MS = 10 * MINUTE_MS;
export const NOTED_AFTER_MS = 2 * MINUTE_MS;

/** Whether a writer at `now` that rewrites a bucket ending at `end` must raise the project's generation. */
export const rewriteNoted = (end: number, now: number) => end <= now - NOTED_AFTER_MS;

/**
 * A range split at what a reader at `now` may keep: the buckets that ended SETTLED_MS before it (kept between reads),
 * and the rest (read each time, the minutes with their unmerged parts). A bucket of `length` starting at t covers
 * [t, t + length); the range's buckets are those starting in [ceil(from), to).
 */
export function splitSettled(r: BucketRange, length: number, now: number): { settled: BucketRange | null; fresh: BucketRange | null } {
  const cut = Math.max(r.from, Math.min(r.to, Math.floor((now - SETTLED_MS) / length) * length));
  return { settled: cut > r.from ? { ...r, to: cut } : null, fresh: cut < r.to ? { ...r, from: cut } : null };
}

export interface GroupParts {
  environment: string;
  release: string | null;
  name: string;
  op: string;
  method: string | null;
}

export interface SpanParts {
  op: string;
  description: string;
}

export interface SpanCounts {
  /** spans */
  n: number;
  /** their total time, ms */
  t: number;
  /** transactions that held the group */
  tx: number;
  /** transactions that held it N_PLUS_ONE times or more (an N+1) */
  r: number;
}

export interface GroupCounts {
  n: number;
  /** the estimated count: each transaction counted as 1 / its trace's sample rate */
  x: number;
  /** failures */
  e: number;
  /** total duration, ms */
  s: number;
  h: Histogram;
  v?: Partial<Record<Vital, VitalCounts>>;
  sp?: Record<string, SpanCounts>;
}

/** A project's minute, hour or day: group key → its counts. */
export type Bucket = Record<string, GroupCounts>;

/** The same query this many times in one transaction is an N+1. */
export const N_PLUS_ONE = 5;
/** Most span groups kept per transaction group in one bucket; the rest are summed under OTHER_SPANS. */
export const SPAN_GROUPS_MAX = 40;
export const OTHER_SPANS = 'other';
/** Distinct transaction names a project keeps; later ones are counted under OVERFLOW_NAME. */
export const NAMES_MAX = 1000;
export const OVERFLOW_NAME = '<other transactions>';

const hash = (parts: readonly unknown[]) => crypto.createHash('sha256').update(JSON.stringify(parts)).digest().subarray(0, 9).toString('base64url');
export const groupKeyOf = (g: GroupParts) => hash([g.environment, g.release, g.name, g.op, g.method]);
/** Span group keys computed lately (a worker sees the same few queries again and again: a hash each is most of its time). */
const spanKeys = new Map<string, string>();
export function spanKeyOf(s: SpanParts): string {
  const id = `${s.op}\n${s.description}`;
  let key = spanKeys.get(id);
  if (key === undefined) {
    if (spanKeys.size >= 10_000) spanKeys.clear();
    spanKeys.set(id, (key = hash([s.op, s.description])));
  }
  return key;
}

export function groupPartsOf(tx: Pick<TransactionRecord, 'environment' | 'release' | 'name' | 'op' | 'method'>): GroupParts {
  return { environment: tx.environment, release: tx.release, name: tx.name, op: tx.op, method: tx.method };
}

export function emptyCounts(): GroupCounts {
  return { n: 0, x: 0, e: 0, s: 0, h: {} };
}

/**
 * Counts one transaction into `bucket` under `key`, and returns the span groups it named (for the caller to keep
 * their parts).
 */
export function addTransaction(bucket: Bucket, key: string, tx: TransactionRecord): Map<string, SpanParts> {
  const c = (bucket[key] ??= emptyCounts());
  const duration = tx.end - tx.start;
  c.n += 1;
  c.x += tx.sample_rate ? 1 / tx.sample_rate : 1;
  if (tx.failed) c.e += 1;
  c.s += duration;
  const b = String(bucketOf(duration));
  c.h[b] = (c.h[b] ?? 0) + 1;
  addVitals(c, tx.vitals);
  const named = new Map<string, SpanParts>();
  const inThis = new Map<string, { n: number; t: number }>();
  for (const span of tx.spans) {
    const parts = { op: span.op, description: span.description === null ? '' : spanGroupDescription(span.op, span.description) };
    const sk = spanKeyOf(parts);
    named.set(sk, parts);
    const seen = inThis.get(sk) ?? { n: 0, t: 0 };
    seen.n += 1;
    seen.t += span.end - span.start;
    inThis.set(sk, seen);
  }
  c.sp ??= {};
  for (const [sk, seen] of inThis) {
    const kept = c.sp[sk] !== undefined || Object.keys(c.sp).length < SPAN_GROUPS_MAX ? sk : OTHER_SPANS;
    const s = (c.sp[kept] ??= { n: 0, t: 0, tx: 0, r: 0 });
    s.n += seen.n;
    s.t += seen.t;
    s.tx += 1;
    if (seen.n >= N_PLUS_ONE) s.r += 1;
  }
  if (Object.keys(c.sp).length === 0) delete c.sp;
  return named;
}

/** Adds web vitals (a page-load's, or an INP span's) to a group's counts. */
export function addVitals(c: GroupCounts, vitals: Partial<Record<Vital, number>>): void {
  for (const [name, value] of Object.entries(vitals) as [Vital, number][]) {
    c.v ??= {};
    c.v[name] = addVital(c.v[name], name, value);
  }
}

/** Counts vitals that came on their own (an INP span) under `key`, without counting a transaction. */
export function addVitalsOnly(bucket: Bucket, key: string, vitals: Partial<Record<Vital, number>>): void {
  addVitals((bucket[key] ??= emptyCounts()), vitals);
}

/** One group's counts added into another's (in place; a new one when `into` is undefined), span groups kept under SPAN_GROUPS_MAX. */
export function mergeCounts(into: GroupCounts | undefined, f: Readonly<GroupCounts>): GroupCounts {
  const c = into ?? emptyCounts();
  c.n += f.n;
  c.x += f.x;
  c.e += f.e;
  c.s += f.s;
  addHistogram(c.h, f.h);
  for (const [name, v] of Object.entries(f.v ?? {}) as [Vital, VitalCounts][]) {
    c.v ??= {};
    c.v[name] = mergeVital(c.v[name], v);
  }
  for (const [sk, s] of Object.entries(f.sp ?? {})) {
    c.sp ??= {};
    const kept = c.sp[sk] !== undefined || Object.keys(c.sp).length < SPAN_GROUPS_MAX ? sk : OTHER_SPANS;
    const t = (c.sp[kept] ??= { n: 0, t: 0, tx: 0, r: 0 });
    t.n += s.n;
    t.t += s.t;
    t.tx += s.tx;
    t.r += s.r;
  }
  return c;
}

/** Adds `from` into `into` (in place), group by group; returns `into`. */
export function mergeBuckets(into: Bucket, from: Readonly<Bucket>): Bucket {
  for (const [key, f] of Object.entries(from)) into[key] = mergeCounts(into[key], f);
  return into;
}

/** The sum of several buckets (a window's). */
export const sumBuckets = (buckets: readonly Readonly<Bucket>[]): Bucket => buckets.reduce<Bucket>((sum, b) => mergeBuckets(sum, b), {});
