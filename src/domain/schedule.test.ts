import { describe, expect, it } from 'vitest';
import { MONITOR_DEFAULTS, type MonitorConfig, type Schedule } from './checkins.ts';
import { nextRuns, validCrontab } from './schedule.ts';

const config = (schedule: Schedule, timezone: string): MonitorConfig => ({ ...MONITOR_DEFAULTS, schedule, timezone });
const crontab = (value: string, timezone: string) => config({ type: 'crontab', value }, timezone);
const runs = (c: MonitorConfig, after: string, n: number) => nextRuns(c, Date.parse(after), n).map((t) => new Date(t).toISOString().slice(0, 16));

describe('crontab schedules across daylight-saving changes', () => {
  it.each([
    // Berlin springs forward on 2026-03-29 at 02:00 (CET → CEST): 02:30 does not happen that night
    ['Europe/Berlin', '30 2 * * *', '2026-03-27T12:00Z', ['2026-03-28T01:30', '2026-03-30T00:30', '2026-03-31T00:30']],
    // every quarter hour of 02:00–03:00: none that night
    ['Europe/Berlin', '*/15 2 * * *', '2026-03-28T12:00Z', ['2026-03-30T00:00', '2026-03-30T00:15', '2026-03-30T00:30']],
    // and falls back on 2026-10-25 at 03:00 (CEST → CET): 02:30 happens twice, expected once
    ['Europe/Berlin', '30 2 * * *', '2026-10-24T12:00Z', ['2026-10-25T00:30', '2026-10-26T01:30', '2026-10-27T01:30']],
    // hourly goes on by the real hour: 01:00 CET, then 03:00 CEST
    ['Europe/Berlin', '0 * * * *', '2026-03-28T23:30Z', ['2026-03-29T00:00', '2026-03-29T01:00', '2026-03-29T02:00']],
    // New York springs forward on 2026-03-08 at 02:00 (EST → EDT)
    ['America/New_York', '30 2 * * *', '2026-03-06T12:00Z', ['2026-03-07T07:30', '2026-03-09T06:30', '2026-03-10T06:30']],
    // and falls back on 2026-11-01 at 02:00 (EDT → EST): 01:30 happens twice, expected once
    ['America/New_York', '30 1 * * *', '2026-10-31T12:00Z', ['2026-11-01T05:30', '2026-11-02T06:30', '2026-11-03T06:30']],
    // a weekday schedule keeps its local time on both sides of the change
    ['America/New_York', '0 9 * * 1-5', '2026-03-06T15:00Z', ['2026-03-09T13:00', '2026-03-10T13:00', '2026-03-11T13:00']],
  ])('%s %s after %s', (zone, value, after, expected) => {
    expect(runs(crontab(value, zone), after, 3)).toEqual(expected);
  });

  it('UTC has no changes: every minute is every minute', () => {
    expect(runs(crontab('* * * * *', 'UTC'), '2026-03-29T00:59:30Z', 3)).toEqual(['2026-03-29T01:00', '2026-03-29T01:01', '2026-03-29T01:02']);
  });
});

describe('interval schedules', () => {
  it('count from the check-in, floored to its minute; a day is a calendar day in the zone', () => {
    expect(runs(config({ type: 'interval', value: 15, unit: 'minute' }, 'UTC'), '2026-01-01T10:07:40Z', 2)).toEqual(['2026-01-01T10:22', '2026-01-01T10:37']);
    // a day across Berlin's spring change is 23 hours long
    expect(runs(config({ type: 'interval', value: 1, unit: 'day' }, 'Europe/Berlin'), '2026-03-28T10:00Z', 2)).toEqual(['2026-03-29T09:00', '2026-03-30T09:00']);
    expect(runs(config({ type: 'interval', value: 1, unit: 'month' }, 'UTC'), '2026-01-31T00:00Z', 1)).toEqual(['2026-02-28T00:00']);
  });
});

it('validCrontab takes five fields cron-parser reads', () => {
  expect(['* * * * *', '0 9 * * 1-5', '*/15 0-6 1,15 * MON'].map(validCrontab)).toEqual([true, true, true]);
  expect(['* * * *', '61 * * * *', 'every day', '* * * * * *'].map(validCrontab)).toEqual([false, false, false, false]);
});
