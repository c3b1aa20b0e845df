import { describe, expect, it } from 'vitest';
import { prng } from '../../test/helpers/prng.ts';
import { addVital, apdex, bucketHigh, bucketOf, bucketValue, LAST_BUCKET, quantile, vitalBand, vitalP75, type Histogram } from './perf-math.ts';

function histogramOf(values: number[]): Histogram {
  const h: Histogram = {};
  for (const v of values) h[bucketOf(v)] = (h[bucketOf(v)] ?? 0) + 1;
  return h;
}
const nearestRank = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil(q * values.length) - 1)]!;

describe('duration buckets', () => {
  it.each([
    [0, 0],
    [0.5, 0],
    [1, 1],
    [2, 5],
    [1000, 40],
    [3_600_000, LAST_BUCKET],
    [86_400_000, LAST_BUCKET],
    [Number.NaN, 0],
  ])('%s ms is in bucket %s', (ms, bucket) => expect(bucketOf(ms)).toBe(bucket));

  it('a bucket holds the values between its bounds, and stands for a value inside them', () => {
    for (let b = 1; b < LAST_BUCKET; b++) {
      const value = bucketValue(b);
      expect(bucketOf(value)).toBe(b);
      expect(value).toBeLessThan(bucketHigh(b));
      expect(bucketHigh(b) / bucketHigh(b - 1)).toBeCloseTo(2 ** 0.25, 6);
    }
  });

  it('the first bucket (under 1 ms) stands for half a millisecond: a sub-millisecond quantile is within 0.5 ms', () => {
    expect(bucketValue(0)).toBe(0.5);
    for (const ms of [0, 0.05, 0.5, 0.83, 0.999]) expect(Math.abs(quantile(histogramOf([ms, ms, ms]), 0.5)! - ms)).toBeLessThanOrEqual(0.5);
  });

  it('a quantile read from the buckets is within a bucket of the exact one (random streams)', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const random = prng(seed);
      const values = Array.from({ length: 1 + Math.floor(random() * 500) }, () => Math.exp(random() * 12));
      const h = histogramOf(values);
      for (const q of [0.5, 0.75, 0.95, 0.99]) {
        const exact = nearestRank(values, q);
        const read = quantile(h, q)!;
        expect(read / exact, `seed ${seed} q ${q}`).toBeGreaterThan(2 ** -0.25 - 1e-9);
        expect(read / exact, `seed ${seed} q ${q}`).toBeLessThan(2 ** 0.25 + 1e-9);
      }
    }
  });

  it('an empty histogram has no quantile and no Apdex', () => {
    expect(quantile({}, 0.5)).toBeNull();
    expect(apdex({}, 300)).toBeNull();
  });
});

describe('Apdex', () => {
  it('counts satisfied in full and tolerating by half', () => {
    // 100 ms satisfied, 800 ms tolerating (≤ 4 × 300), 2 s frustrated
    expect(apdex(histogramOf([100, 100, 800, 2000]), 300)).toBeCloseTo((2 + 0.5) / 4, 6);
    expect(apdex(histogramOf([50]), 300)).toBe(1);
    expect(apdex(histogramOf([5000]), 300)).toBe(0);
  });
});

describe('web vitals', () => {
  it.each([
    ['lcp', 2500, 'good'],
    ['lcp', 2501, 'meh'],
    ['lcp', 4001, 'poor'],
    ['inp', 200, 'good'],
    ['inp', 501, 'poor'],
    ['cls', 0.1, 'good'],
    ['cls', 0.2, 'meh'],
    ['cls', 0.3, 'poor'],
    ['ttfb', 900, 'meh'],
    ['fcp', 3500, 'poor'],
  ] as const)('%s of %s is %s', (vital, value, band) => expect(vitalBand(vital, value)).toBe(band));

  it('keeps CLS scaled in its histogram and reads its p75 back unscaled', () => {
    let v = addVital(undefined, 'cls', 0.05);
    for (const x of [0.05, 0.12, 0.3]) v = addVital(v, 'cls', x);
    expect(v).toMatchObject({ good: 2, meh: 1, poor: 1 });
    expect(vitalP75('cls', v)!).toBeGreaterThan(0.1);
    expect(vitalP75('cls', v)!).toBeLessThan(0.15);
  });
});
