/**
 * The notification rules checked where the counts move, each recorded with
 * a once-only step (src/notify/notify.state.ts): which triggers a project's
 * scripts record, a channel's frequency rule (the events worker, after a
 * job's events are counted) and its crash-free rule (the flusher, after the
 * hourly rollups are written). The dispatcher (./dispatcher.ts) sends what
 * they record.
 */
import { releaseSubject } from '../domain/client-keys.ts';
import type { TriggerRecord } from '../domain/notifications.ts';
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
