/**
 * The performance rollup (issue 69) on the real store: parts merge into minutes once their group is applied, a
 * merge cut off between its write and its delete counts nothing twice, closed hours and days are sums of what they
 * hold (summed again when a late part arrives, even after a pass cut off between the minute and the hour), and a
 * window read from days, hours, minutes and parts equals the sum of everything in it; a job delivered again after it
 * was applied counts nothing twice; a reader keeps settled buckets until a late part or retention changes them.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mergeBuckets, sumBuckets, type Bucket } from '../src/domain/perf-buckets.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS, timeKey } from '../src/store/traces.store.ts';
import { makeProject, startTestContext, type TestContext } from './helpers/context.ts';
import { processTraceGroups } from '../workers/digest/traces.ts';

let ctx: TestContext;
let P = 0;
beforeAll(async () => {
  ctx = await startTestContext();
  P = Number((await makeProject(ctx)).project.id);
});
afterAll(() => ctx?.close());

/** A bucket of one group with `n` transactions of `ms` each. */
const counts = (n: number, ms = 100): Bucket => ({ g1: { n, x: n, e: 0, s: n * ms, h: { '27': n } } });
const part = (minute: number, group: string, n: number) => ({ _id: `${timeKey(P, minute)}:${group}`, b: counts(n) });

it('merges parts into minutes, hours and days; a cut-off merge and a late part count once', async () => {
  const store = ctx.runtime.stores.traces;
  const rollup = ctx.runtime.perfRollup;
  const day = Math.floor(Date.now() / DAY_MS) * DAY_MS - 2 * DAY_MS; // two whole days ago
  const m1 = day + 3 * HOUR_MS + 5 * MINUTE_MS;
  const m2 = day + 3 * HOUR_MS + 6 * MINUTE_MS;
  const m3 = day + DAY_MS + 10 * HOUR_MS;
  // a group still waiting for its job: its part waits too
  await store.insertGroup([]).then(async (g) => store.writeParts([part(m1, g.id, 100)]).then(() => g));
  await store.writeParts([part(m1, 'g1', 1), part(m1, 'g2', 2), part(m2, 'g3', 4), part(m3, 'g4', 8)]);
  // a merge cut off after its write: the minute lists g5's part as merged, which is still there
  await store.saveBucket('minute', { _id: timeKey(P, m2), b: counts(16), merged: [`${timeKey(P, m2)}:g5`] });
  await store.writeParts([part(m2, 'g5', 16)]);
  // an install whose rollup last ran three days ago catches up, two days a pass
  await store.setRolledUntil('hour', day - DAY_MS);
  await store.setRolledUntil('day', day - DAY_MS);
  for (let i = 0; i < 3; i++) await rollup.pass(new Date());

  expect((await store.bucket('minute', timeKey(P, m1)))?.b).toEqual(counts(3));
  expect((await store.bucket('minute', timeKey(P, m2)))?.b).toEqual(counts(20));
  expect((await store.pendingParts(100)).map((p) => p.b.g1!.n)).toEqual([100]);
  // closed hours and days are sums
  expect((await store.bucket('hour', timeKey(P, day + 3 * HOUR_MS)))?.b).toEqual(counts(23));
  expect((await store.bucket('day', timeKey(P, day)))?.b).toEqual(counts(23));
  expect((await store.bucket('day', timeKey(P, day + DAY_MS)))?.b).toEqual(counts(8));

  // a late part of a summed hour: the hour and its day are summed again
  await store.writeParts([part(m1, 'g6', 32)]);
  await rollup.pass(new Date());
  await rollup.pass(new Date()); // nothing more to do: the same result
  expect((await store.bucket('hour', timeKey(P, day + 3 * HOUR_MS)))?.b).toEqual(counts(55));
  expect((await store.bucket('day', timeKey(P, day)))?.b).toEqual(counts(55));

  // a pass cut off after it wrote a late part's minute, before it summed the hour again: the next pass does
  const merging = [part(m1, 'g8', 64)];
  await store.noteResum(P, day + 3 * HOUR_MS);
  await store.saveBucket('minute', { _id: timeKey(P, m1), b: mergeBuckets(counts(3 + 32), merging[0]!.b), merged: merging.map((p) => p._id) });
  await rollup.pass(new Date());
  expect((await store.bucket('hour', timeKey(P, day + 3 * HOUR_MS)))?.b).toEqual(counts(55 + 64));
  expect((await store.bucket('day', timeKey(P, day)))?.b).toEqual(counts(55 + 64));
  expect(await store.resumsNoted()).toEqual([]);

  // a window read across days, hours, minutes and an unmerged part equals the sum of all it holds
  const now = Date.now();
  const recent = Math.floor(now / MINUTE_MS) * MINUTE_MS - MINUTE_MS;
  await store.writeParts([part(recent, 'g7', 64)]);
  const slices = await ctx.runtime.performance.slices(P, { from: day - HOUR_MS, to: now + 1 });
  const total = sumBuckets(slices.map((s) => s.b));
  expect(total).toEqual(mergeBuckets(counts(55 + 64 + 8 + 64), {}));
  // a window that starts inside a day reads that day's hours and minutes, not the whole day
  const inside = sumBuckets((await ctx.runtime.performance.slices(P, { from: m2, to: day + DAY_MS })).map((s) => s.b));
  expect(inside).toEqual(counts(20));
});

it('a job delivered again after its groups were applied and merged counts nothing twice', async () => {
  const store = ctx.runtime.stores.traces;
  const end = Date.now();
  const tx = (i: number) => ({
    project: P,
    kind: 'transaction' as const,
    tx: {
      event_id: `${i}`.padStart(32, 'e'),
      trace_id: `${i}`.padStart(32, 'a'),
      span_id: `${i}`.padStart(16, 'b'),
      parent_span_id: null,
      name: 'GET /again',
      source: 'route',
      op: 'http.server',
      method: 'GET',
      environment: 'production',
      release: null,
      start: end - 100,
      end,
      status: 'ok',
      failed: false,
      http_status: null,
      vitals: {},
      spans: [],
      platform: null,
      user: null,
      url: null,
      sample_rate: null,
      notes: {},
    },
  });
  const group = await store.insertGroup([tx(1), tx(2), tx(3)]);
  const payload = { groups: [group] };
  await processTraceGroups(payload, ctx.runtime, new Date());
  await ctx.runtime.perfRollup.pass(new Date());
  // the worker died before BullMQ heard the job was done: it is delivered again, carrying its records
  await processTraceGroups(payload, ctx.runtime, new Date());
  await ctx.runtime.perfRollup.pass(new Date());
  const [row] = await ctx.runtime.performance.groups(P, { from: end - 3600_000, to: Date.now() + 1 });
  expect(row).toMatchObject({ name: 'GET /again', count: 3 });
});

it('a reader keeps settled buckets and reads them again once a late part or retention changes one', async () => {
  const store = ctx.runtime.stores.traces;
  const { perfRollup, performance } = ctx.runtime;
  const Q = Number((await makeProject(ctx)).project.id);
  const latePart = (minute: number, group: string, n: number) => ({ _id: `${timeKey(Q, minute)}:${group}`, b: counts(n) });
  const read = async () => sumBuckets((await performance.slices(Q, { from: Date.now() - HOUR_MS, to: Date.now() })).map((s) => s.b));
  const m1 = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS - 30 * MINUTE_MS;
  const m2 = m1 - 10 * MINUTE_MS;
  await store.writeParts([latePart(m1, 'g1', 5)]);
  await perfRollup.pass(new Date());
  expect(await read()).toEqual(counts(5));

  // changed behind the reader's back (no writer does this): the reader answers what it kept
  await store.saveBucket('minute', { _id: timeKey(Q, m1), b: counts(7) });
  expect(await read()).toEqual(counts(5));
  // a late part rewrites the settled minute: the pass raises the generation and the reader reads it again
  await store.writeParts([latePart(m1, 'g2', 1)]);
  await perfRollup.pass(new Date());
  expect(await read()).toEqual(counts(8));
  // a settled minute that held nothing when it was read, then a late part for it
  await store.writeParts([latePart(m2, 'g3', 2)]);
  await perfRollup.pass(new Date());
  expect(await read()).toEqual(counts(10));

  // retention forgets the minutes (a clock two weeks ahead): so does the reader
  const before = await ctx.runtime.tracesState.bucketsGeneration(Q);
  await new Promise((resolve) => setTimeout(resolve, 1100)); // the process' list of projects, read once a second
  await perfRollup.expire(new Date(Date.now() + 15 * DAY_MS));
  expect(await ctx.runtime.tracesState.bucketsGeneration(Q)).not.toBe(before);
  expect(await read()).toEqual({});
});
