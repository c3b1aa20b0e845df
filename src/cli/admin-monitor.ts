/**
 * `lookout admin monitor …` and `lookout admin probe …` (src/cli/admin.ts): cron monitors made, listed, paused,
 * resumed and removed by hand, and uptime probes added, listed and removed.
 */
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
  [
    'probe add',
    '--project ID --url URL [--interval N] [--expect-status S] [--keyword K]',
    'an uptime probe: URL checked every N minutes (1–60, default 5); S: the statuses that mean up (default 200-399); down after 3 failed checks in a row, each confirmed',
  ],
  ['probe list', '--project ID', "the project's uptime probes with each one's state"],
  ['probe remove', '--project ID --probe ID', 'remove a probe and its results (its issues stay)'],
  [
    'maintenance add',
    '--project ID --from TIME --to TIME [--slug S]',
    "a maintenance window (ISO times, at most 31 days): the project's monitors (or S) raise nothing until it ends, then their true state",
  ],
  ['maintenance list', '--project ID', "the project's maintenance windows"],
  ['maintenance remove', '--project ID --window ID', 'remove a maintenance window'],
] as const;

/** `--every '10 minutes'` → an interval schedule. */
function every(text: string) {
  const m = /^(\d{1,6})\s*(minute|hour|day|week|month|year)s?$/.exec(text.trim());
  if (!m) throw new UsageError("--every takes a number and a unit, such as '10 minutes' or '1 day'");
  return { type: 'interval' as const, value: Number(m[1]), unit: m[2] as 'minute' };
}

export function parseMonitorCommand(noun: string, verb: string, values: Values): (rt: Runtime) => Promise<unknown> {
  const project = id(values, 'project');
  if (noun === 'probe') return parseProbeCommand(project, verb, values);
  if (noun === 'maintenance') return parseWindowCommand(project, verb, values);
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

function parseProbeCommand(project: number, verb: string, values: Values): (rt: Runtime) => Promise<unknown> {
  switch (verb) {
    case 'add': {
      // The service checks the values as for the dashboard (src/domain/probes.ts).
      const body = defined({ url: need(values, 'url'), interval_min: wholeNumber(values, 'interval'), expect_status: values['expect-status'], keyword: values.keyword });
      return (rt) => rt.probes.add(project, body, new Date());
    }
    case 'list':
      return async (rt) => {
        await rt.admin.showProject(project); // 404 for an unknown project
        return rt.probes.list(project);
      };
    default: {
      const probe = need(values, 'probe');
      if (!/^[1-9]\d{0,15}$/.test(probe)) throw new UsageError('--probe must be a numeric id');
      return (rt) => rt.probes.remove(project, Number(probe));
    }
  }
}

function parseWindowCommand(project: number, verb: string, values: Values): (rt: Runtime) => Promise<unknown> {
  switch (verb) {
    case 'add': {
      const body = { from: need(values, 'from'), to: need(values, 'to'), monitor: values.slug ?? null };
      return (rt) => rt.monitorsAdmin.addWindow(project, body, new Date());
    }
    case 'list':
      return async (rt) => {
        await rt.admin.showProject(project); // 404 for an unknown project
        return rt.monitorsAdmin.windows(project);
      };
    default: {
      const window = need(values, 'window');
      if (!/^[1-9]\d{0,15}$/.test(window)) throw new UsageError('--window must be a numeric id');
      return (rt) => rt.monitorsAdmin.removeWindow(project, Number(window));
    }
  }
}
