import { describe, expect, it } from 'vitest';
import { admission, BUSY_FLOOR_PER_S, fairShares, nextAdmitRate, sentryRateLimits, type AdmissionSignals } from './admission.ts';

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

  // the ingest requests a second a busy thread takes next, from the last moment's busy share and what it took
  it.each([
    ['calm, no limit', null, 0.5, 900, null],
    ['busy: three quarters of what it took', null, 0.95, 1200, 900],
    ['busier still: lower again', 900, 0.9, 880, 660],
    ['saturated: half', 900, 0.99, 880, 440],
    ['busy with refusals alone: the floor', 100, 0.99, 60, BUSY_FLOOR_PER_S],
    ['near the limit: held', 660, 0.8, 650, 660],
    ['well under it: a quarter more', 660, 0.6, 650, 875],
    ['far above what comes: lifted', 2000, 0.5, 450, null],
    ['switched off (100%)', 300, 0.99, 300, null],
  ] as const)('%s', (_, rate, busy, takenPerS, next) => {
    expect(nextAdmitRate(rate, { busy, takenPerS }, _.startsWith('switched') ? 1 : 0.85)).toBe(next);
  });

  // shares of 400 requests a second among the keys that sent in the last moment (requests a second each)
  it.each([
    ['a calm key beside a storming one keeps its rate and half again', { calm: 100, storm: 6000 }, { calm: 155, storm: 245 }],
    ['two storming keys split it', { a: 3000, b: 3000 }, { a: 200, b: 200 }],
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
