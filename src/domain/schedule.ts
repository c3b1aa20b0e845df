/**
 * When a monitor's next run is expected: a crontab schedule read by cron-parser in the monitor's time zone
 * (daylight-saving changes included: a time the clock skips is not expected that day, a time it repeats is expected
 * once), or an interval counted from the last check-in (it drifts with the job, as Sentry's). Times are whole
 * minutes, in ms.
 */
import { CronExpressionParser } from 'cron-parser';
import { DateTime } from 'luxon';
import type { MonitorConfig, Schedule } from './checkins.ts';

const MINUTE = 60_000;

/** Whether a crontab expression of five fields is one cron-parser reads. */
export function validCrontab(expression: string): boolean {
  if (expression.trim().split(/\s+/).length !== 5) return false;
  try {
    CronExpressionParser.parse(expression, { tz: 'UTC' });
    return true;
  } catch {
    return false;
  }
}

/** The schedule's next run strictly after `after` (ms) in `timezone`; null when it never runs again. */
export function nextRunOf(schedule: Schedule, timezone: string, after: number): number | null {
  if (schedule.type === 'crontab') {
    try {
      const expression = CronExpressionParser.parse(schedule.value, { currentDate: new Date(after), tz: timezone });
      // cron-parser moves a time the clock skips to the hour after; such a run is not expected (the wall time never
      // came), so the next one that falls on the expression is taken
      for (let i = 0; i < 100; i++) {
        const at = expression.next();
        if (expression.includesDate(at)) return at.getTime();
      }
      return null;
    } catch {
      return null;
    }
  }
  const from = DateTime.fromMillis(after - (after % MINUTE), { zone: timezone });
  return from.plus({ [`${schedule.unit}s`]: schedule.value }).toMillis();
}

/** The next run of a monitor's configuration after `after`; null without a schedule. */
export function nextRun(config: MonitorConfig, after: number): number | null {
  return config.schedule ? nextRunOf(config.schedule, config.timezone, after) : null;
}

/** The next `n` runs after `after`, for the Monitors page (a wrong time zone is seen at once). */
export function nextRuns(config: MonitorConfig, after: number, n: number): number[] {
  const out: number[] = [];
  for (let at = nextRun(config, after); at !== null && out.length < n; at = nextRun(config, at)) out.push(at);
  return out;
}
