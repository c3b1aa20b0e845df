import { describe, expect, it } from 'vitest';
import { admission, sentryRateLimits, type AdmissionSignals } from './admission.ts';

const LIMITS = { maxWaiting: 2000, maxOldestWaitMs: 250, maxLoopDelayMs: 200, maxQueueDepth: 50_000, maxRedisMemory: 0.9, diskFloorBytes: 1e9 };
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

  it.each([
    [1, 'ingest_backlog', [], '1::organization:ingest_backlog'],
    [60, 'quota_minute', ['error', 'default', 'security'], '60:error;default;security:project:quota_minute'],
  ] as const)('X-Sentry-Rate-Limits for %i s, %s', (seconds, reason, categories, header) => {
    expect(sentryRateLimits(seconds, reason, categories, categories.length ? 'project' : 'organization')).toBe(header);
  });
});
