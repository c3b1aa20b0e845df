import { describe, expect, it } from 'vitest';
import { prng } from '../../test/helpers/prng.ts';
import { addTransaction, DAY_MS, groupKeyOf, groupPartsOf, HOUR_MS, mergeBuckets, MINUTE_MS, N_PLUS_ONE, OTHER_SPANS, SPAN_GROUPS_MAX, NOTED_AFTER_MS, rewriteNoted, SETTLED_MS, splitSettled, sumBuckets, windowReads, type Bucket, type BucketRange } from './perf-buckets.ts';
import { histogramCount, quantile } from './perf-math.ts';
import type { SpanRecord, TransactionRecord } from './transactions.ts';

function tx(random: () => number, extra: Partial<TransactionRecord> = {}): TransactionRecord {
  const start = 1_795_953_540_000 + Math.floor(random() * 60_000);
  const duration = Math.exp(random() * 9);
  const spans: SpanRecord[] = Array.from({ length: Math.floor(random() * 8) }, (_, i) => ({
    span_id: i.toString(16).padStart(16, '0'),
    parent_span_id: null,
    op: 'db.query',
    description: `SELECT * FROM t WHERE id = ${Math.floor(random() * 3)}`,
    start,
    end: start + 1,
    status: null,
  }));
  return {
    event_id: 'e'.repeat(32),
    trace_id: 'a'.repeat(32),
    span_id: 'b'.repeat(16),
    parent_span_id: null,
    name: random() < 0.5 ? 'GET /a' : 'GET /b',
    source: 'route',
    op: 'http.server',
    method: 'GET',
    environment: 'production',
    release: null,
    start,
    end: start + duration,
    status: random() < 0.1 ? 'internal_error' : 'ok',
    failed: false,
    http_status: null,
    vitals: random() < 0.3 ? { lcp: random() * 5000 } : {},
    spans,
    platform: null,
    user: null,
    url: null,
    sample_rate: random() < 0.5 ? 0.5 : null,
    notes: {},
    ...extra,
  };
}

function bucketOfAll(txs: TransactionRecord[]): Bucket {
  const b: Bucket = {};
  for (const t of txs) addTransaction(b, groupKeyOf(groupPartsOf(t)), { ...t, failed: t.status !== 'ok' });
  return b;
}

describe('buckets', () => {
  it('counts a transaction: its duration, failure, estimated count, vitals and span groups', () => {
    const random = prng(1);
    const t = tx(random, { status: 'internal_error', failed: true, sample_rate: 0.25, vitals: { lcp: 1200 } });
    const b: Bucket = {};
    const named = addTransaction(b, 'k', t);
    expect(b.k).toMatchObject({ n: 1, x: 4, e: 1, v: { lcp: { good: 1, meh: 0, poor: 0 } } });
    expect(histogramCount(b.k!.h)).toBe(1);
    expect([...named.values()].every((s) => s.description === 'SELECT * FROM t WHERE id = %s')).toBe(true);
  });

  it('marks a query run N_PLUS_ONE times in one transaction', () => {
    const random = prng(2);
    const t = tx(random);
    t.spans = Array.from({ length: N_PLUS_ONE }, (_, i) => ({ span_id: String(i).padStart(16, '0'), parent_span_id: null, op: 'db', description: `SELECT ${i}`, start: t.start, end: t.start + 2, status: null }));
    const b: Bucket = {};
    addTransaction(b, 'k', t);
    expect(Object.values(b.k!.sp!)).toEqual([{ n: N_PLUS_ONE, t: 2 * N_PLUS_ONE, tx: 1, r: 1 }]);
  });

  it('keeps SPAN_GROUPS_MAX span groups per transaction group, the rest under `other`', () => {
    const random = prng(3);
    const t = tx(random);
    t.spans = Array.from({ length: SPAN_GROUPS_MAX + 10 }, (_, i) => ({ span_id: String(i).padStart(16, '0'), parent_span_id: null, op: `op${i}`, description: 'x', start: t.start, end: t.start + 1, status: null }));
    const b: Bucket = {};
    addTransaction(b, 'k', t);
    expect(Object.keys(b.k!.sp!)).toHaveLength(SPAN_GROUPS_MAX + 1);
    expect(b.k!.sp![OTHER_SPANS]).toMatchObject({ n: 10 });
  });

  it('sums the same however the transactions were split into parts and merged (random streams)', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const random = prng(seed);
      const txs = Array.from({ length: 1 + Math.floor(random() * 60) }, () => tx(random));
      const whole = bucketOfAll(txs);
      // split into random parts, merged in a random order, some through an intermediate sum (a minute, then an hour)
      const parts: TransactionRecord[][] = [];
      for (const t of txs) {
        if (parts.length === 0 || random() < 0.3) parts.push([]);
        parts.at(-1)!.push(t);
      }
      const buckets = parts.map(bucketOfAll).sort(() => random() - 0.5);
      const half = Math.floor(buckets.length / 2);
      const merged = mergeBuckets(sumBuckets(buckets.slice(0, half)), sumBuckets(buckets.slice(half)));
      expect(merged, `seed ${seed}`).toEqual(JSON.parse(JSON.stringify(whole)) as Bucket);
      for (const key of Object.keys(whole)) expect(quantile(merged[key]!.h, 0.95)).toBe(quantile(whole[key]!.h, 0.95));
    }
  });
});

describe('the reads that cover a window', () => {
  const D = DAY_MS;
  const H = HOUR_MS;
  const M = MINUTE_MS;
  it.each<[string, { from: number; to: number }, number, number, BucketRange[]]>([
    ['an hour inside a day, nothing summed', { from: 10 * D + 2 * H, to: 10 * D + 3 * H }, 0, 0, [{ period: 'minute', from: 10 * D + 2 * H, to: 10 * D + 3 * H }]],
    ['an hour, hours summed', { from: 10 * D + 2 * H, to: 10 * D + 3 * H }, 11 * D, 11 * D, [{ period: 'hour', from: 10 * D + 2 * H, to: 10 * D + 3 * H }]],
    [
      'thirty days to now: days, hours at both edges, minutes at both edges',
      { from: 10 * D + 5 * H + 30 * M, to: 40 * D + 7 * H + 20 * M },
      40 * D + 6 * H,
      40 * D,
      [
        { period: 'day', from: 11 * D, to: 40 * D },
        { period: 'hour', from: 10 * D + 6 * H, to: 11 * D },
        { period: 'minute', from: 10 * D + 5 * H + 30 * M, to: 10 * D + 6 * H },
        { period: 'hour', from: 40 * D, to: 40 * D + 6 * H },
        { period: 'minute', from: 40 * D + 6 * H, to: 40 * D + 7 * H + 20 * M },
      ],
    ],
  ])('%s', (_, w, hoursRolled, daysRolled, reads) => {
    expect(windowReads(w, hoursRolled, daysRolled)).toEqual(reads);
  });

  it('cover every minute of the window once, whole days and hours only where summed', () => {
    const rand = prng(71);
    for (let i = 0; i < 2000; i++) {
      const from = Math.floor(rand() * 40 * 24 * 60) * M;
      const to = from + Math.floor(rand() * 35 * 24 * 60 + 1) * M;
      const hoursRolled = Math.floor(rand() * 45 * 24) * H;
      const daysRolled = Math.floor(rand() * 45) * D;
      const reads = windowReads({ from, to }, hoursRolled, daysRolled);
      const covered = reads.reduce((n, r) => n + (r.to - r.from), 0);
      expect(covered).toBe(to - from);
      const sorted = [...reads].sort((a, b) => a.from - b.from);
      sorted.forEach((r, k) => {
        expect(r.to).toBeGreaterThan(r.from);
        expect(r.from).toBeGreaterThanOrEqual(k === 0 ? from : sorted[k - 1]!.to);
        if (r.period === 'day') expect([r.from % D, r.to % D, r.to <= daysRolled]).toEqual([0, 0, true]);
        if (r.period === 'hour') expect([r.from % H, r.to % H, r.to <= hoursRolled]).toEqual([0, 0, true]);
      });
      expect(sorted.at(-1)!.to).toBe(to);
    }
  });
});

describe('what a reader keeps between reads', () => {
  const H = HOUR_MS;
  const M = MINUTE_MS;
  const now = 100 * H + 37 * M + 12_000;
  it.each<[string, BucketRange, { settled: BucketRange | null; fresh: BucketRange | null }]>([
    ['minutes of the last hour: those that ended ten minutes ago kept', { period: 'minute', from: 99 * H + 40 * M, to: now }, { settled: { period: 'minute', from: 99 * H + 40 * M, to: 100 * H + 27 * M }, fresh: { period: 'minute', from: 100 * H + 27 * M, to: now } }],
    ['a window starting inside a minute keeps from the minute after', { period: 'minute', from: 99 * H + 40 * M + 5, to: 99 * H + 50 * M }, { settled: { period: 'minute', from: 99 * H + 40 * M + 5, to: 99 * H + 50 * M }, fresh: null }],
    ['the last ten minutes: nothing kept', { period: 'minute', from: 100 * H + 28 * M, to: now }, { settled: null, fresh: { period: 'minute', from: 100 * H + 28 * M, to: now } }],
    ['summed hours are all settled', { period: 'hour', from: 90 * H, to: 100 * H }, { settled: { period: 'hour', from: 90 * H, to: 100 * H }, fresh: null }],
    ['an hour that ended five minutes ago is not', { period: 'hour', from: 90 * H, to: 101 * H }, { settled: { period: 'hour', from: 90 * H, to: 100 * H }, fresh: { period: 'hour', from: 100 * H, to: 101 * H } }],
  ])('%s', (_, r, split) => {
    expect(splitSettled(r, r.period === 'hour' ? H : M, now)).toEqual(split);
  });

  it('keeps only buckets that ended SETTLED_MS ago, each on one side once', () => {
    const rand = prng(69);
    for (let i = 0; i < 2000; i++) {
      const length = [M, H, DAY_MS][Math.floor(rand() * 3)]!;
      const from = Math.floor(rand() * 1e6) * 1000;
      const r: BucketRange = { period: 'minute', from, to: from + 1 + Math.floor(rand() * 10 * length) };
      const at = from + Math.floor(rand() * 12 * length);
      const { settled, fresh } = splitSettled(r, length, at);
      const starts = (x: BucketRange | null) => {
        const out: number[] = [];
        for (let t = x ? Math.ceil(x.from / length) * length : 0; x && t < x.to; t += length) out.push(t);
        return out;
      };
      for (const t of starts(settled)) expect(t + length).toBeLessThanOrEqual(at - SETTLED_MS);
      expect([...starts(settled), ...starts(fresh)]).toEqual(starts(r));
    }
  });

  it('a writer raises the generation for what a reader with a clock up to eight minutes ahead may keep', () => {
    const end = 50 * H;
    expect(rewriteNoted(end, end + NOTED_AFTER_MS)).toBe(true);
    expect(rewriteNoted(end, end + NOTED_AFTER_MS - 1)).toBe(false);
    expect(SETTLED_MS - NOTED_AFTER_MS).toBe(8 * M);
  });
});
