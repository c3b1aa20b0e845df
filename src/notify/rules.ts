/**
 * The notification rules checked where the counts move, each recorded with
 * a once-only step (src/notify/notify.state.ts): which triggers a project's
 * scripts record, a channel's frequency rule (the events worker, after a
 * job's events are counted), its crash-free rule (the flusher, after the
 * hourly rollups are written) and its performance rule (the workers' minute
 * check, src/notify/perf-alerts.ts). The dispatcher (./dispatcher.ts) sends what
 * they record.
 */
import { releaseSubject } from '../domain/client-keys.ts';
import { DEFAULT_PERFORMANCE, type TriggerRecord } from '../domain/notifications.ts';
import { freeRate, total } from '../domain/sessions.ts';
import type { NotifyState } from './notify.state.ts';
import type { RollupSnapshot } from '../state/sessions.state.ts';
import type { ChannelDoc } from '../store/channels.store.ts';

/** A project's channels, as the workers read them (through a cache of a second: src/runtime.ts). */
export type ChannelCache = (project: number) => Promise<ChannelDoc[]>;

/** How long a crash-free rule stays quiet after it fired, unless the rate recovers first. */
const CRASH_FREE_HOLD_MS = 24 * 3600_000;

/** What the apply scripts record for a project: '' nothing (no channel), 't' triggers, 'tf' triggers and minute counts. */
export function notifyFlags(channels: ChannelDoc[]): string {
  if (channels.length === 0) return '';
  return channels.some((c) => c.on.includes('issue.frequency')) ? 'tf' : 't';
}

/**
 * issue.frequency: after a job's events are counted, each channel's rule
 * over the issues they touched: more than `count` events received in the
 * last `minutes` minutes fires once per issue per the channel's interval.
 */
export async function checkFrequency(
  notify: NotifyState,
  project: number,
  channels: ChannelDoc[],
  touched: Map<number, { level: string; environment: string | null }>,
  now: Date,
): Promise<void> {
  const rules = channels.filter((c) => c.on.includes('issue.frequency') && !c.paused_at);
  if (rules.length === 0 || touched.size === 0) return;
  const counts = await notify.minuteCounts(project, [...touched.keys()]);
  const minute = Math.floor(now.getTime() / 60_000);
  for (const channel of rules) {
    const { count, minutes, interval_minutes } = channel.frequency;
    for (const [issue, perMinute] of counts) {
      let events = 0;
      for (const [m, n] of perMinute) if (m > minute - minutes) events += n;
      if (events <= count) continue;
      const { level, environment } = touched.get(issue)!;
      const trigger: TriggerRecord = { event: 'issue.frequency', issue, at: now.getTime(), level, environment, channel: channel._id, events, minutes, threshold: count };
      await notify.raise(project, channel._id, `i${issue}`, interval_minutes * 60_000, trigger);
    }
  }
}

/**
 * release.crash_free: after the flusher wrote a project's hourly rollups, each
 * channel's rule over those of the current clock hour and the one before (a
 * rollup flushed just after the hour turned still counts): below `threshold`
 * % crash-free sessions with at least `min_sessions` fires once, and again
 * only after the current hour's rate was seen back at or above it (or a day
 * passed).
 */
export async function checkCrashFree(notify: NotifyState, project: number, channels: ChannelDoc[], rollups: RollupSnapshot[], now: Date): Promise<boolean> {
  const rules = channels.filter((c) => c.on.includes('release.crash_free') && !c.paused_at);
  const hour = Math.floor(now.getTime() / 3600_000) * 3600_000;
  const recent = rollups.filter((r) => r.kind === 'hour' && r.hour !== null && r.hour.getTime() >= hour - 3600_000);
  let raised = false;
  for (const channel of rules) {
    const { threshold, min_sessions } = channel.crash_free;
    for (const r of recent) {
      if (channel.environment && r.environment !== channel.environment) continue;
      const sessions = total(r.sessions);
      if (sessions < min_sessions) continue;
      const rate = Math.floor(freeRate(r.sessions.crashed, sessions)! * 10_000) / 100;
      const subject = releaseSubject(r.release, r.environment);
      if (rate >= threshold) {
        if (r.hour!.getTime() === hour) await notify.rearm(project, channel._id, subject);
        continue;
      }
      const trigger: TriggerRecord = {
        event: 'release.crash_free',
        at: now.getTime(),
        environment: r.environment,
        channel: channel._id,
        release: r.release,
        rate,
        threshold,
        sessions,
        crashed: r.sessions.crashed,
        hour: r.hour!.toISOString(),
      };
      raised = (await notify.raise(project, channel._id, subject, CRASH_FREE_HOLD_MS, trigger)) || raised;
    }
  }
  return raised;
}

/** A transaction group as the performance rule reads it (src/services/performance.service.ts' rows). */
export interface GroupFigures {
  key: string;
  name: string;
  op: string;
  count: number;
  p95_ms: number | null;
  failure_rate: number | null;
}

/** How long a performance rule stays quiet for a group after it fired, unless the group recovers first. */
const PERFORMANCE_HOLD_MS = 6 * 3600_000;

/**
 * performance.regressed (issue 69): each channel's rule over the groups of its window: a p95 over `p95_ms` or a
 * failure rate over `failure_rate` %, with at least `min_count` transactions, fires once per group, and again only
 * after the group was seen back within both (or the hold passed). `groupsOf` reads a window's groups.
 */
export async function checkPerformance(
  notify: NotifyState,
  project: number,
  channels: ChannelDoc[],
  groupsOf: (windowMinutes: number, environment: string | null) => Promise<GroupFigures[]>,
  now: Date,
): Promise<boolean> {
  let raised = false;
  for (const channel of channels.filter((c) => c.on.includes('performance.regressed') && !c.paused_at)) {
    const rule = { ...DEFAULT_PERFORMANCE, ...channel.performance };
    for (const g of await groupsOf(rule.window_minutes, channel.environment)) {
      if (g.count < rule.min_count) continue;
      const slow = rule.p95_ms !== null && g.p95_ms !== null && g.p95_ms > rule.p95_ms;
      const failing = rule.failure_rate !== null && g.failure_rate !== null && g.failure_rate * 100 > rule.failure_rate;
      const subject = `perf:${g.key}`;
      if (!slow && !failing) {
        await notify.rearm(project, channel._id, subject);
        continue;
      }
      const trigger: TriggerRecord = {
        event: 'performance.regressed',
        at: now.getTime(),
        environment: channel.environment,
        channel: channel._id,
        transaction: g.name,
        op: g.op,
        group: g.key,
        count: g.count,
        p95_ms: g.p95_ms,
        failure_rate: g.failure_rate,
        window_minutes: rule.window_minutes,
        thresholds: { p95_ms: rule.p95_ms, failure_rate: rule.failure_rate },
        why: [slow && 'p95', failing && 'failure_rate'].filter(Boolean),
      };
      raised = (await notify.raise(project, channel._id, subject, PERFORMANCE_HOLD_MS, trigger)) || raised;
    }
  }
  return raised;
}
