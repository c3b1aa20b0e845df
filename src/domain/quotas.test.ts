import { describe, expect, it } from 'vitest';
import { DEFAULT_QUOTAS, quotaVerdict, spikeCeiling, usualPerHour, windowEnd, windowIndex, type Quotas, type WindowCounts } from './quotas.ts';

const AT = Date.UTC(2026, 10, 27, 10, 20, 30, 500); // 10:20:30.5 on 27 November 2026
const NONE: WindowCounts = { minute: 0, hour: 0, month: 0, spike: 0 };
const TIGHT: Quotas = { ...DEFAULT_QUOTAS, events_per_minute: 100, events_per_hour: 1000, events_per_month: 5000, sessions_per_minute: 50 };

describe('quota windows', () => {
  it.each([
    ['minute', Date.UTC(2026, 10, 27, 10, 21)],
    ['hour', Date.UTC(2026, 10, 27, 11)],
    ['month', Date.UTC(2026, 11, 1)],
    ['spike', Date.UTC(2026, 10, 27, 10, 20, 40)],
  ] as const)('a %s ends on its boundary', (window, end) => {
    expect(windowEnd(window, windowIndex(window, AT))).toBe(end);
  });

  it('December ends with the year', () => {
    expect(new Date(windowEnd('month', windowIndex('month', Date.UTC(2026, 11, 31, 23))))).toEqual(new Date(Date.UTC(2027, 0, 1)));
  });
});

describe('quotaVerdict', () => {
  it.each([
    ['nothing taken yet', 'error', NONE, 1, { admit: true }],
    ['up to the minute limit', 'error', { ...NONE, minute: 99 }, 1, { admit: true }],
    ['past the minute limit: until the minute ends', 'error', { ...NONE, minute: 100 }, 1, { admit: false, reason: 'quota_minute', retryAfter: 30 }],
    ['past the hour limit: until the hour ends', 'error', { ...NONE, hour: 1000 }, 1, { admit: false, reason: 'quota_hour', retryAfter: 2370 }],
    ['past the month limit', 'error', { ...NONE, month: 5000 }, 1, { admit: false, reason: 'quota_month', retryAfter: 308_370 }],
    ['sessions have their own quota', 'session', { ...NONE, minute: 49 }, 2, { admit: false, reason: 'quota_minute', retryAfter: 30 }],
    ["sessions pass the events' limits", 'session', { ...NONE, hour: 5000 }, 1, { admit: true }],
  ] as const)('%s', (_, category, counts, n, verdict) => {
    expect(quotaVerdict(counts, TIGHT, category, n, AT, spikeCeiling(0))).toEqual(verdict);
  });

  it('no limit: null', () => {
    expect(quotaVerdict({ minute: 1e9, hour: 1e9, month: 1e9, spike: 0 }, { ...TIGHT, events_per_minute: null, events_per_hour: null, events_per_month: null }, 'error', 1, AT, spikeCeiling(0))).toEqual({ admit: true });
  });
});

describe('spike protection', () => {
  it('a quiet project is held at the floor (1,000 a second), a busy one at ten times its usual rate', () => {
    expect(spikeCeiling(0)).toBe(10_000);
    expect(spikeCeiling(360_000)).toBe(10_000); // 100 a second usually: ten times is the floor
    expect(spikeCeiling(3_600_000)).toBe(100_000); // 1,000 a second usually
    expect(spikeCeiling(0, 60)).toBe(10); // a floor an operator set (SPIKE_FLOOR_PER_MINUTE)
  });

  it('the usual rate is the mean of the last 24 hours, a missing hour counting as none', () => {
    expect(usualPerHour([2400, 2400])).toBe(200);
  });

  it.each([
    ['under the ceiling', 9_999, true, { admit: true }],
    ['over it: until the 10 s window ends', 10_000, true, { admit: false, reason: 'spike', retryAfter: 10 }],
    ['off', 10_000, false, { admit: true }],
  ] as const)('%s', (_, spike, on, verdict) => {
    expect(quotaVerdict({ ...NONE, spike }, { ...DEFAULT_QUOTAS, spike_protection: on }, 'error', 1, Date.UTC(2026, 10, 27, 10, 20, 30), spikeCeiling(0))).toEqual(verdict);
  });

  it('sessions are never held by it', () => {
    expect(quotaVerdict({ ...NONE, spike: 1e9 }, DEFAULT_QUOTAS, 'session', 1, AT, spikeCeiling(0))).toEqual({ admit: true });
  });
});
