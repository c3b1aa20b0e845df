import { describe, expect, it } from 'vitest';
import { admission, bufferBound, CALM, nextShedding, SENDER_BURST, sentryRateLimits, type AdmissionSignals, type Shedding } from './admission.ts';

const LIMITS = { bufferItems: 4000, bufferSeconds: 2, maxStallMs: 10_000, targetDelayMs: 250, intervalMs: 1000, maxQueueDepth: 50_000, maxRedisMemory: 0.9, diskFloorBytes: 1e9 };
const IDLE: AdmissionSignals = { inFlight: 10, answeredPerS: 400, oldestWriteWaitMs: 5, queueDepth: 40, redisMemory: 0.2, diskFreeBytes: 50e9 };
const ALONE = { inFlight: 10, senders: 1, sendsPerS: 100, largestPerS: 100 };
const STORM = { inFlight: 280, senders: 2, sendsPerS: 6000, largestPerS: 6000 };

describe('admission', () => {
  it.each([
    ['idle', {}, ALONE, false, { admit: true }],
    ['no memory limit, disk unknown', { redisMemory: null, diskFreeBytes: null }, ALONE, false, { admit: true }],
    ['a burst of 3,999 at once on an idle process', { inFlight: 3999, answeredPerS: 0 }, { ...ALONE, inFlight: 3999 }, false, { admit: true }],
    ['at the limits, not past them', { oldestWriteWaitMs: 10_000, queueDepth: 50_000, redisMemory: 0.9, diskFreeBytes: 1e9 }, ALONE, false, { admit: true }],
    ['the buffer full', { inFlight: 4000, answeredPerS: 0 }, { ...ALONE, inFlight: 4000 }, false, { admit: false, status: 429, reason: 'ingest_backlog', retryAfter: 1 }],
    ['a buffer of two seconds of what is answered, when more', { inFlight: 5000, answeredPerS: 3000 }, { ...ALONE, inFlight: 5000 }, false, { admit: true }],
    ['the buffer full: a sender under its share is still taken', { inFlight: 4500, answeredPerS: 0 }, { ...ALONE, inFlight: 100, senders: 2 }, false, { admit: true }],
    ['... until twice the buffer', { inFlight: 8000, answeredPerS: 0 }, { ...ALONE, inFlight: 100, senders: 2 }, false, { admit: false, status: 429, reason: 'ingest_backlog', retryAfter: 1 }],
    ['a store that has not written for ten seconds', { oldestWriteWaitMs: 10_001 }, ALONE, false, { admit: false, status: 429, reason: 'ingest_slow', retryAfter: 1 }],
    ['the queue is deep', { queueDepth: 60_000 }, ALONE, false, { admit: false, status: 429, reason: 'queue_depth', retryAfter: 5 }],
    ['Redis near maxmemory', { redisMemory: 0.95 }, ALONE, false, { admit: false, status: 503, reason: 'redis_memory', retryAfter: 30 }],
    ['the disk under its floor', { diskFreeBytes: 5e8 }, ALONE, false, { admit: false, status: 503, reason: 'disk_floor', retryAfter: 60 }],
    // a full store says more than a full buffer
    ['full disk and a full buffer', { diskFreeBytes: 0, inFlight: 9999 }, ALONE, false, { admit: false, status: 503, reason: 'disk_floor', retryAfter: 60 }],
    // shedding keeps about a quarter second of what is answered (1,000 a second: 250)
    ['shedding, the queue under the target', { inFlight: 200, answeredPerS: 1000 }, STORM, true, { admit: true }],
    ['shedding, the queue at the target: the storming sender refused', { inFlight: 300, answeredPerS: 1000 }, STORM, true, { admit: false, status: 429, reason: 'queue_delay', retryAfter: 1 }],
    ['... and one sending half as much as it', { inFlight: 300, answeredPerS: 1000 }, { ...STORM, sendsPerS: 3000 }, true, { admit: false, status: 429, reason: 'queue_delay', retryAfter: 1 }],
    ['shedding: a calm sender beside it taken, however slow its answers', { inFlight: 300, answeredPerS: 1000 }, { ...STORM, inFlight: 200, sendsPerS: 100 }, true, { admit: true }],
    ['shedding: a sender with a few in flight is always taken', { inFlight: 300, answeredPerS: 1000 }, { ...STORM, inFlight: SENDER_BURST - 1 }, true, { admit: true }],
    ['not shedding: the same queue taken', { inFlight: 300, answeredPerS: 1000 }, STORM, false, { admit: true }],
  ] as const)('%s', (_, change, sender, shedding, verdict) => {
    expect(admission({ ...IDLE, ...change }, sender, shedding, LIMITS)).toEqual(verdict);
  });

  it('the buffer bound', () => {
    expect(bufferBound(0, LIMITS)).toBe(4000);
    expect(bufferBound(3000, LIMITS)).toBe(6000);
  });

  // CoDel: over the target (250 ms) for a whole interval (1 s) while more arrived than the buffer holds (4,000), or
  // within 16 intervals of the last shedding, starts shedding; under half the target for a whole interval, or nothing
  // in flight, ends it
  const over = (since: number, arrived: number, shedding = false, lastShedAt: number | null = null): Shedding => ({ overSince: since, arrivedOver: arrived, shedding, underSince: null, lastShedAt });
  const shedding = (at: number, underSince: number | null = null): Shedding => ({ ...CALM, shedding: true, underSince, lastShedAt: at });
  const calm = (lastShedAt: number): Shedding => ({ ...CALM, lastShedAt });
  // [why, state, delay (ms), arrived, in flight, now, next]
  it.each<[string, Shedding, number, number, number, number, Shedding]>([
    ['under the target', CALM, 100, 50, 20, 5000, CALM],
    ['over it: since when is noted, and what arrives', CALM, 400, 300, 300, 5000, over(5000, 300)],
    ['over it for less than the interval: a burst draining', over(5000, 4500), 2000, 0, 3000, 5999, over(5000, 4500)],
    ['over it for the interval, more arrived than the buffer: a standing queue', over(5000, 3900), 300, 200, 500, 6000, over(5000, 4100, true, 6000)],
    ['over it for seconds, less arrived than the buffer: a burst a slow store drains', over(5000, 2000), 3000, 0, 1500, 9000, over(5000, 2000)],
    ['under it once: the interval starts again', over(5000, 5000), 200, 10, 400, 5500, CALM],
    ['shedding holds it near the target', shedding(6950), 200, 900, 300, 7000, shedding(7000)],
    ['shedding, over again', shedding(6950), 260, 900, 300, 7000, over(7000, 900, true, 7000)],
    ['shedding, under half the target: since when is noted', shedding(6950), 100, 900, 300, 7000, shedding(7000, 7000)],
    ['... and back near the target within the interval: shedding goes on', shedding(7950, 7000), 200, 900, 300, 7999, shedding(7999)],
    ['under half the target for a whole interval: shedding ends, remembered', shedding(7950, 7000), 100, 900, 300, 8000, calm(8000)],
    ['nothing in flight: shedding ends at once', shedding(6950), 0, 0, 0, 7000, calm(7000)],
    ['standing again soon after: shed after the interval whatever arrived', over(20_000, 100, false, 7000), 300, 100, 200, 21_000, over(20_000, 200, true, 21_000)],
    ['standing again long after: a burst again', over(30_000, 100, false, 7000), 300, 100, 200, 31_000, over(30_000, 200, false, 7000)],
  ])('%s', (_, state, delayMs, arrived, inFlight, now, next) => {
    expect(nextShedding(state, { delayMs, arrived, inFlight }, now, LIMITS)).toEqual(next);
  });

  it.each([
    [1, 'ingest_backlog', [], '1::organization:ingest_backlog'],
    [60, 'quota_minute', ['error', 'default', 'security'], '60:error;default;security:project:quota_minute'],
  ] as const)('X-Sentry-Rate-Limits for %i s, %s', (seconds, reason, categories, header) => {
    expect(sentryRateLimits(seconds, reason, categories, categories.length ? 'project' : 'organization')).toBe(header);
  });
});
