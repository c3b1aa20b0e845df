/**
 * From triggers to deliveries. The scripts that change an issue record its
 * triggers in the project's outbox in the same atomic step (so a trigger
 * exists once, whatever is retried); this module reads them in order and,
 * for each channel a trigger reaches, routes a delivery through noise
 * control and enqueues it on the notifications queue under its delivery id.
 *
 * Dispatching again (a dispatcher that died before it advanced the outbox,
 * two at once) repeats nothing: the routing answers what it answered
 * before, and BullMQ takes a job id once. The rules of a channel's own
 * (frequency, crash-free rate) are checked here too, by the workers that see
 * the counts, and recorded with the same once-only step.
 */
import crypto from 'node:crypto';
import { channelTakes, DIGEST_ITEMS, noticeBody, type IssueSummary, type TriggerRecord } from '../domain/notifications.ts';
import { freeRate, total } from '../domain/sessions.ts';
import type { Logger } from '../log.ts';
import type { JobPayloads, Queues } from '../queues/registry.ts';
import type { RollupSnapshot } from '../state/sessions.state.ts';
import type { NotifyState } from '../state/notify.state.ts';
import type { ChannelDoc, ChannelsStore } from '../store/channels.store.ts';
import type { IssueDoc } from '../store/issues.store.ts';
import type { ProjectsStore } from '../store/projects.store.ts';
import { makeTicker } from '../util/ticker.ts';

/** Noise control per channel: at most this many messages in a window; beyond, one digest per window. */
export const NOISE = { perWindow: 10, windowMs: 60_000, digestItems: DIGEST_ITEMS } as const;
/** How long a crash-free rule stays quiet after it fired, unless the rate recovers first. */
const CRASH_FREE_HOLD_MS = 24 * 3600_000;
const BATCH = 200;

/** A project's channels, read at most once a second per process (a new channel hears of triggers within a second). */
export function makeChannelCache(store: ChannelsStore) {
  const cache = new Map<number, { at: number; channels: ChannelDoc[] }>();
  return async (project: number): Promise<ChannelDoc[]> => {
    const hit = cache.get(project);
    if (hit && Date.now() - hit.at < 1000) return hit.channels;
    const channels = await store.ofProject(project);
    cache.set(project, { at: Date.now(), channels });
    return channels;
  };
}
export type ChannelCache = ReturnType<typeof makeChannelCache>;

/** What the apply scripts record for a project: '' nothing (no channel), 't' triggers, 'tf' triggers and minute counts. */
export function notifyFlags(channels: ChannelDoc[]): string {
  if (channels.length === 0) return '';
  return channels.some((c) => c.on.includes('issue.frequency')) ? 'tf' : 't';
}

export function issueSummary(doc: IssueDoc, publicUrl: string): IssueSummary {
  return {
    id: String(doc._id),
    title: doc.title,
    kind: doc.kind,
    level: doc.level,
    status: doc.status,
    event_count: doc.event_count,
    first_seen: doc.first_seen.toISOString(),
    last_seen: doc.last_seen.toISOString(),
    last_release: doc.last_release,
    url: `${publicUrl}/projects/${doc.project_id}/issues/${doc._id}`,
  };
}

export function makeDispatcher(deps: {
  notify: NotifyState;
  channels: ChannelCache;
  projects: ProjectsStore;
  queues: Queues;
  log: Logger;
  publicUrl: string;
  intervalMs: number;
}) {
  const { notify, log } = deps;

  async function dispatchProject(project: number, now: Date): Promise<number> {
    let sent = 0;
    for (;;) {
      const entries = await notify.pending(project, BATCH);
      if (entries.length === 0) return sent;
      const channels = await deps.channels(project);
      const ref = { id: String(project), name: (await deps.projects.get(project))?.name ?? `project ${project}` };
      const issueIds = [...new Set(entries.map((e) => e.trigger.issue).filter((i): i is number => i !== undefined))];
      const issues = await notify.issues(project, issueIds);
      const jobs: { payload: JobPayloads['notify.deliver']; jobId: string; delay?: number }[] = [];
      for (const { id, trigger } of entries) {
        const issue = trigger.issue === undefined ? undefined : issues.get(trigger.issue);
        const summary = issue ? issueSummary(issue, deps.publicUrl) : null;
        for (const channel of channels.filter((c) => channelTakes({ ...c, id: c._id }, trigger))) {
          const delivery = `n${project}-${id}-c${channel._id}`;
          const body = noticeBody(trigger, delivery, ref, summary);
          const opened = { id: delivery, channel: channel._id, event: trigger.event };
          if (channel.paused_at) {
            await notify.openDelivery(project, { ...opened, status: 'paused' }, now);
            continue;
          }
          const route = await notify.route(project, channel._id, delivery, JSON.stringify(body), now, NOISE);
          if (route.send) {
            await notify.openDelivery(project, { ...opened, status: 'queued' }, now);
            jobs.push({ payload: { project, channel: channel._id, delivery, event: trigger.event, body }, jobId: delivery });
          } else {
            await notify.openDelivery(project, { ...opened, status: 'in_digest', digest: route.digest }, now);
            await notify.openDelivery(project, { id: route.digest, channel: channel._id, event: 'digest', status: 'queued' }, now);
            const payload = { project, channel: channel._id, delivery: route.digest, event: 'digest' as const, project_name: ref.name };
            jobs.push({ payload, jobId: route.digest, delay: Math.max(0, route.due.getTime() - now.getTime()) });
          }
        }
      }
      if (jobs.length > 0) await deps.queues.enqueueBulk('notify.deliver', jobs);
      sent += jobs.length;
      await notify.dispatched(project, entries.at(-1)!.id);
    }
  }

  const ticker = makeTicker(
    async () => {
      const now = new Date();
      for (const project of await notify.takeProjects()) {
        try {
          await dispatchProject(project, now);
        } catch (err) {
          await notify.markProject(project);
          log.warn({ project, err: (err as Error).message }, 'dispatching notifications failed; retrying on the next tick');
        }
      }
    },
    (err) => log.warn({ err: err.message }, 'notification dispatch failed; retrying on the next tick'),
    deps.intervalMs,
  );
  return { ...ticker, dispatchProject };
}
export type Dispatcher = ReturnType<typeof makeDispatcher>;

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
      const subject = `r${crypto.createHash('sha256').update(`${r.release}\n${r.environment}`).digest('hex').slice(0, 16)}`;
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
