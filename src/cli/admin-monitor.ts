/** `lookout admin monitor …` (src/cli/admin.ts): cron monitors made, listed, paused, resumed and removed by hand. */
import type { Runtime } from '../runtime.ts';
import { defined, id, need, nonEmpty, wholeNumber, type Values } from './admin-options.ts';
import { UsageError } from './usage.ts';

export const MONITOR_COMMANDS = [
  [
    'monitor add',
    "--project ID --slug S [--name N] [--schedule CRONTAB | --every 'N UNIT'] [--timezone TZ] [--margin MIN] [--max-runtime MIN] [--failures N] [--recoveries N]",
    "make a cron monitor or change one (what is named is set, the rest kept); UNIT: minute, hour, day, week, month or year; --schedule '' leaves it unscheduled",
  ],
  ['monitor list', '--project ID', "the project's monitors: each environment's state and the next five expected runs"],
  ['monitor show', '--project ID --slug S', 'a monitor with the newest runs of each environment'],
  ['monitor pause|resume', '--project ID --slug S', 'pause a monitor (check-ins recorded, nothing missed or raised), or resume it'],
  ['monitor remove', '--project ID --slug S', 'remove a monitor and its runs (its issue stays)'],
] as const;

/** `--every '10 minutes'` → an interval schedule. */
function every(text: string) {
  const m = /^(\d{1,6})\s*(minute|hour|day|week|month|year)s?$/.exec(text.trim());
  if (!m) throw new UsageError("--every takes a number and a unit, such as '10 minutes' or '1 day'");
  return { type: 'interval' as const, value: Number(m[1]), unit: m[2] as 'minute' };
}

export function parseMonitorCommand(verb: string, values: Values): (rt: Runtime) => Promise<unknown> {
  const project = id(values, 'project');
  switch (verb) {
    case 'add': {
      if (values.schedule !== undefined && values.every !== undefined) throw new UsageError('monitor add takes one of --schedule or --every');
      const schedule = values.every !== undefined ? every(values.every) : values.schedule === undefined ? undefined : values.schedule === '' ? null : { type: 'crontab', value: values.schedule };
      // The service checks the values as a check-in's monitor_config is checked, as for the dashboard.
      const body = defined({
        slug: need(values, 'slug'),
        name: values.name,
        config: nonEmpty(
          defined({
            schedule,
            timezone: values.timezone,
            checkin_margin: wholeNumber(values, 'margin'),
            max_runtime: wholeNumber(values, 'max-runtime'),
            failure_issue_threshold: wholeNumber(values, 'failures'),
            recovery_threshold: wholeNumber(values, 'recoveries'),
          }),
        ),
      });
      return (rt) => rt.monitorsAdmin.set(project, body, new Date());
    }
    case 'list':
      return async (rt) => {
        await rt.admin.showProject(project); // 404 for an unknown project
        return rt.monitorsAdmin.list(project, new Date());
      };
    case 'show': {
      const slug = need(values, 'slug');
      return (rt) => rt.monitorsAdmin.show(project, slug, new Date());
    }
    case 'pause':
    case 'resume': {
      const slug = need(values, 'slug');
      return (rt) => rt.monitorsAdmin.setPaused(project, slug, verb === 'pause', new Date());
    }
    default: {
      const slug = need(values, 'slug');
      return (rt) => rt.monitorsAdmin.remove(project, slug);
    }
  }
}
