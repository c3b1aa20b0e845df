import { describe, expect, it } from 'vitest';
import { admission, BUSY_FLOOR_PER_S, calmFloor, fairShares, nextAdmitRate, sentryRateLimits, type AdmissionSignals } from './admission.ts';

const LIMITS = { maxWaiting: 2000, maxOldestWaitMs: 250, maxLoopDelayMs: 200, maxQueueDepth: 50_000, maxRedisMemory: 0.9, diskFloorBytes: 1e9, maxBusy: 0.85, busyAfterMs: 15_000 };
const CALM: AdmissionSignals = { waiting: 10, oldestWaitMs: 5, loopDelayMs: 12, queueDepth: 40, redisMemory: 0.2, diskFreeBytes: 50e9 };

describe('admission', () => {
  it.each([
    ['calm', {}, { admit: true }],
    ['no memory limit, disk unknown', { redisMemory: null, diskFreeBytes: null }, { admit: true }],
    ['at the limits, not past them', { waiting: 2000, oldestWaitMs: 250, loopDelayMs: 200, queueDepth: 50_000, redisMemory: 0.9, diskFreeBytes: 1e9 }, { admit: true }],
    ['too many waiting', { waiting: 2001 }, { admit: false, status: 429, reason: 'ingest_backlog', retryAfter: 1 }],
    ['the oldest waited too long', { oldestWaitMs: 400 }, { admit: false, status: 429, reason: 'ingest_slow', retryAfter: 1 }],
    ['the event loop lags', { loopDelayMs: 350 }, { admit: false, status: 429, reason: 'event_loop', retryAfter: 1 }],
    ['the queue is deep', { queueDepth: 60_000 }, { admit: false, status: 429, reason: 'queue_depth', retryAfter: 5 }],
    ['Redis near maxmemory', { redisMemory: 0.95 }, { admit: false, status: 503, reason: 'redis_memory', retryAfter: 30 }],
    ['the disk under its floor', { diskFreeBytes: 5e8 }, { admit: false, status: 503, reason: 'disk_floor', retryAfter: 60 }],
    // a full store says more than a busy process
    ['full disk and a backlog', { diskFreeBytes: 0, waiting: 9999 }, { admit: false, status: 503, reason: 'disk_floor', retryAfter: 60 }],
  ] as const)('%s', (_, change, verdict) => {
    expect(admission({ ...CALM, ...change }, LIMITS)).toEqual(verdict);
  });

  // the ingest requests a second a busy thread takes next, from the last moment: at 90% allowed and 0.3 ms a request
  // taken, a third of the thread takes 1,000 a second; it usually took 600 a second
  const MOMENT = { takenPerS: 0, usualPerS: 600, costMs: 0.3, saturatedFor: 1, floor: 0 };
  it.each([
    ['calm, no limit', null, { busy: 0.5, takenPerS: 900 }, null],
    ['busy, not saturated: nine tenths of what it took', null, { busy: 0.93, takenPerS: 1200 }, 1080],
    ["a storm's onset: half what it took, at most a third of the thread", null, { busy: 1, takenPerS: 4000 }, 1000],
    ['a stall that looked like one: never under what it usually takes', null, { busy: 1, takenPerS: 700 }, 600],
    ['saturated over a third of the thread: half what it took', 1500, { busy: 1, takenPerS: 1400 }, 700],
    ['saturated under it: held while the backlog of refusals drains', 400, { busy: 1, takenPerS: 380, saturatedFor: 3 }, 400],
    ['saturated for ten moments: cut all the same', 400, { busy: 1, takenPerS: 380, saturatedFor: 10 }, 190],
    ['never under what the calm senders ask', 400, { busy: 1, takenPerS: 380, saturatedFor: 10, floor: 310 }, 310],
    ['nor under the floor', 60, { busy: 1, takenPerS: 60, saturatedFor: 10 }, BUSY_FLOOR_PER_S],
    ['within a tenth of the limit: held', 660, { busy: 0.85, takenPerS: 650 }, 660],
    ['well under it: 5% and ten more', 600, { busy: 0.5, takenPerS: 590 }, 640],
    ['a little under it: by the room left', 600, { busy: 0.78, takenPerS: 590 }, 622],
    ['far above what comes: lifted', 2000, { busy: 0.5, takenPerS: 450 }, null],
    ['switched off (100%)', 300, { busy: 0.99, takenPerS: 300 }, null],
  ] as const)('%s', (name, rate, moment, next) => {
    const got = nextAdmitRate(rate, { ...MOMENT, ...moment }, name.startsWith('switched') ? 1 : 0.9);
    if (next === null) expect(got).toBeNull();
    else expect(got).toBeCloseTo(next, 6);
  });

  // the rate a busy API keeps for every sender but the largest (requests a second each; a ceiling of 800)
  it.each([
    ['one sender: the floor', { storm: 6000 }, BUSY_FLOOR_PER_S],
    ['a calm project beside a storming one: its want, twice over', { calm: 100, storm: 6000 }, 310],
    ['three: all but the largest, and the largest at least as much as the next', { a: 20, b: 100, c: 5000 }, 345],
    ['a thousand calm ones: no more than the thread can take', Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`p${i}`, 10]).concat([['storm', 6000]])), 800],
  ] as const)('calm floor: %s', (_, asked, floor) => {
    expect(calmFloor(new Map(Object.entries(asked)), 800)).toBeCloseTo(floor, 6);
  });

  // shares of 400 requests a second among the senders of the last moment (requests a second each)
  it.each([
    ['a calm project beside a storming one keeps its rate and half again', { calm: 100, storm: 6000 }, { calm: 155, storm: 245 }],
    ['two storming projects split it', { a: 3000, b: 3000 }, { a: 200, b: 200 }],
    ['all ask less than there is', { a: 10, b: 20 }, { a: 20, b: 35 }],
    ['three: the smallest first', { a: 20, b: 1000, c: 5000 }, { a: 35, b: 182.5, c: 182.5 }],
  ] as const)('fair shares: %s', (_, asked, shares) => {
    expect(Object.fromEntries(fairShares(400, new Map(Object.entries(asked))))).toEqual(shares);
  });

  it.each([
    [1, 'ingest_backlog', [], '1::organization:ingest_backlog'],
    [60, 'quota_minute', ['error', 'default', 'security'], '60:error;default;security:project:quota_minute'],
  ] as const)('X-Sentry-Rate-Limits for %i s, %s', (seconds, reason, categories, header) => {
    expect(sentryRateLimits(seconds, reason, categories, categories.length ? 'project' : 'organization')).toBe(header);
  });
});
