/**
 * The arithmetic of performance data (issue 69), as pure functions: durations counted in log-scale buckets from
 * 1 ms to an hour, percentiles read from the summed buckets of any window, Apdex against a threshold, and the web
 * vitals' good / needs improvement / poor bands.
 *
 * A bucket holds durations within about 9% of each other (four buckets per doubling), so a percentile read from
 * them is within that of the true one; a window's buckets are sums of its minutes', so any window's percentiles
 * come from the same small records (unlike a lifetime percentile kept per group).
 */

/** Buckets per doubling of the duration. */
const PER_DOUBLING = 4;
/** The last bucket: an hour and over. */
export const LAST_BUCKET = Math.ceil(Math.log2(3_600_000) * PER_DOUBLING);

/** A histogram: bucket index (as a string key, how a document stores it) → count. */
export type Histogram = Record<string, number>;

/** The bucket of a duration in milliseconds: 0 for under 1 ms, LAST_BUCKET for an hour or more. */
export function bucketOf(ms: number): number {
  if (!(ms >= 1)) return 0;
  return Math.min(LAST_BUCKET, 1 + Math.floor(Math.log2(ms) * PER_DOUBLING));
}

/**
 * The value a bucket stands for: the geometric middle of its bounds; for the first (under 1 ms), half a millisecond,
 * so a sub-millisecond percentile is off by half a millisecond at most, not reported as none.
 */
export function bucketValue(bucket: number): number {
  if (bucket <= 0) return 0.5;
  const low = 2 ** ((bucket - 1) / PER_DOUBLING);
  const high = 2 ** (bucket / PER_DOUBLING);
  return Math.sqrt(low * high);
}

/** The upper bound of a bucket (ms): what "at most" questions compare against. */
export function bucketHigh(bucket: number): number {
  return bucket <= 0 ? 1 : 2 ** (bucket / PER_DOUBLING);
}

/** Adds `from` into `into` (in place) and returns `into`. */
export function addHistogram(into: Histogram, from: Readonly<Histogram>): Histogram {
  for (const [k, n] of Object.entries(from)) into[k] = (into[k] ?? 0) + n;
  return into;
}

export function histogramCount(h: Readonly<Histogram>): number {
  let n = 0;
  for (const v of Object.values(h)) n += v;
  return n;
}

/**
 * The `q` quantile (0–1) of a histogram, as the value of the bucket holding it (nearest rank); null when empty.
 */
export function quantile(h: Readonly<Histogram>, q: number): number | null {
  const total = histogramCount(h);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const bucket of Object.keys(h)
    .map(Number)
    .sort((a, b) => a - b)) {
    seen += h[bucket]!;
    if (seen >= rank) return bucketValue(bucket);
  }
  return null;
}

/**
 * Apdex with threshold `t` ms: (satisfied + tolerating / 2) / total, where satisfied is at most `t` and tolerating
 * at most 4`t`; a bucket counts as within a bound when its middle is. Null when empty.
 */
export function apdex(h: Readonly<Histogram>, t: number): number | null {
  const total = histogramCount(h);
  if (total === 0) return null;
  let satisfied = 0;
  let tolerating = 0;
  for (const [k, n] of Object.entries(h)) {
    const v = bucketValue(Number(k));
    if (v <= t) satisfied += n;
    else if (v <= 4 * t) tolerating += n;
  }
  return (satisfied + tolerating / 2) / total;
}

/**
 * The web vitals Lookout keeps, each with its good and poor bounds (web.dev's, as @sentry/browser reports them):
 * at most `good` is good, over `poor` is poor, between needs improvement. CLS has no unit; it is kept × 1,000 in
 * its histogram so its buckets have the same resolution as the others'.
 */
export const VITALS = {
  lcp: { good: 2500, poor: 4000, scale: 1 },
  fcp: { good: 1800, poor: 3000, scale: 1 },
  ttfb: { good: 800, poor: 1800, scale: 1 },
  inp: { good: 200, poor: 500, scale: 1 },
  cls: { good: 0.1, poor: 0.25, scale: 1000 },
} as const;
export type Vital = keyof typeof VITALS;
export const VITAL_NAMES = Object.keys(VITALS) as Vital[];

export type VitalBand = 'good' | 'meh' | 'poor';

export function vitalBand(vital: Vital, value: number): VitalBand {
  const { good, poor } = VITALS[vital];
  return value <= good ? 'good' : value > poor ? 'poor' : 'meh';
}

/** One vital's record in a bucket: its histogram (scaled) and its band counts. */
export interface VitalCounts {
  h: Histogram;
  good: number;
  meh: number;
  poor: number;
}

export function addVital(into: VitalCounts | undefined, vital: Vital, value: number): VitalCounts {
  const v = into ?? { h: {}, good: 0, meh: 0, poor: 0 };
  const bucket = String(bucketOf(value * VITALS[vital].scale));
  v.h[bucket] = (v.h[bucket] ?? 0) + 1;
  v[vitalBand(vital, value)] += 1;
  return v;
}

export function mergeVital(into: VitalCounts | undefined, from: VitalCounts): VitalCounts {
  const v = into ?? { h: {}, good: 0, meh: 0, poor: 0 };
  addHistogram(v.h, from.h);
  v.good += from.good;
  v.meh += from.meh;
  v.poor += from.poor;
  return v;
}

/** A vital's p75 in its own unit (CLS unscaled). */
export function vitalP75(vital: Vital, v: VitalCounts): number | null {
  const q = quantile(v.h, 0.75);
  return q === null ? null : q / VITALS[vital].scale;
}
