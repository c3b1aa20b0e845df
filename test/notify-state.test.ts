/**
 * The notification scripts on a real Redis, called directly: noise control
 * (route-notice-4.lua, take-digest-4.lua) and the once-only rule mark
 * (raise-notice-2.lua).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCrashFree } from '../src/notify/rules.ts';
import type { RollupSnapshot } from '../src/state/sessions.state.ts';
import type { ChannelDoc } from '../src/store/channels.store.ts';
import { startTestContext, type TestContext } from './helpers/context.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => ctx?.close());

const limits = { perWindow: 10, windowMs: 60_000, digestItems: 3 };
const t0 = new Date('2026-11-23T12:00:00Z');
const at = (s: number) => new Date(t0.getTime() + s * 1000);

describe('noise control', () => {
  it('ten alone in a minute, then one digest; routing again answers the same; the digest is taken once', async () => {
    const { notify } = ctx.runtime;
    const routed = [];
    for (let i = 0; i < 15; i++) routed.push(await notify.route(1, 5, `d${i}`, JSON.stringify({ n: i }), at(i), limits));
    expect(routed.slice(0, 10).every((r) => r.send)).toBe(true);
    const digests = routed.slice(10).map((r) => (r.send ? null : r));
    const digest = digests[0]!.digest;
    expect(digests.every((d) => d?.digest === digest && d.due.getTime() === at(10).getTime() + 60_000)).toBe(true);
    // A dispatcher routing the same deliveries again gets the same answers and adds nothing.
    expect(await notify.route(1, 5, 'd3', '{}', at(20), limits)).toEqual({ send: true });
    expect(await notify.route(1, 5, 'd12', '{}', at(20), limits)).toEqual(routed[12]);
    const taken = await notify.takeDigest(1, 5, digest, at(70), limits.windowMs);
    expect(taken).toEqual({ count: 5, bodies: ['{"n":10}', '{"n":11}', '{"n":12}'] });
    expect(await notify.takeDigest(1, 5, digest, at(75), limits.windowMs)).toEqual(taken);
    // The window now holds the ten sent at 0–9 s (gone by 70 s) and the digest: the next goes alone.
    expect(await notify.route(1, 5, 'd15', '{}', at(71), limits)).toEqual({ send: true });
    // Another channel has a window of its own.
    expect(await notify.route(1, 6, 'e0', '{}', at(12), limits)).toEqual({ send: true });
  });

  it('a digest whose state was lost answers null', async () => {
    expect(await ctx.runtime.notify.takeDigest(2, 1, 'n2-d1-0', t0, 60_000)).toBeNull();
  });
});

describe('raise-notice-2.lua', () => {
  it('records a rule once while its mark holds, and again after a rearm', async () => {
    const { notify } = ctx.runtime;
    const trigger = { event: 'issue.frequency' as const, issue: 9, at: t0.getTime(), channel: 3 };
    expect(await notify.raise(3, 3, 'i9', 60_000, trigger)).toBe(true);
    expect(await notify.raise(3, 3, 'i9', 60_000, trigger)).toBe(false);
    expect(await notify.raise(3, 4, 'i9', 60_000, trigger)).toBe(true);
    await notify.rearm(3, 3, 'i9');
    expect(await notify.raise(3, 3, 'i9', 60_000, trigger)).toBe(true);
    expect((await notify.pending(3, 10)).map((e) => e.trigger)).toEqual([trigger, trigger, trigger]);
  });
});

describe('the crash-free rule', () => {
  const channel = { _id: 7, on: ['release.crash_free'], environment: null, paused_at: null, crash_free: { threshold: 90, min_sessions: 10 } } as unknown as ChannelDoc;
  const rollup = (hour: Date, crashed: number) =>
    ({ kind: 'hour', key: '', version: '', environment: 'production', release: '3.0', hour, sessions: { ok: 10 - crashed, errored: 0, abnormal: 0, crashed }, users: { ok: 0, errored: 0, abnormal: 0, crashed: 0 }, first_seen: null, last_seen: null }) as RollupSnapshot;

  it("judges the previous hour's rollup flushed just after the hour turned, once; the current hour's recovery rearms it", async () => {
    const { notify } = ctx.runtime;
    const justAfter = new Date('2026-11-23T13:00:00.500Z');
    expect(await checkCrashFree(notify, 4, [channel], [rollup(new Date('2026-11-23T12:00:00Z'), 3)], justAfter)).toBe(true);
    expect(await checkCrashFree(notify, 4, [channel], [rollup(new Date('2026-11-23T12:00:00Z'), 4)], justAfter)).toBe(false);
    // Two hours back is not judged; the current hour back above the threshold lifts the mark.
    expect(await checkCrashFree(notify, 5, [channel], [rollup(new Date('2026-11-23T11:00:00Z'), 5)], justAfter)).toBe(false);
    expect(await checkCrashFree(notify, 4, [channel], [rollup(new Date('2026-11-23T13:00:00Z'), 0)], justAfter)).toBe(false);
    expect(await checkCrashFree(notify, 4, [channel], [rollup(new Date('2026-11-23T13:00:00Z'), 2)], justAfter)).toBe(true);
    expect((await notify.pending(4, 10)).map((e) => [e.trigger.hour, e.trigger.rate])).toEqual([
      ['2026-11-23T12:00:00.000Z', 70],
      ['2026-11-23T13:00:00.000Z', 80],
    ]);
  });
});
