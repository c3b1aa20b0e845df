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
 * (frequency, crash-free rate) are checked where the counts move
 * (./rules.ts) and reach the outbox the same way.
 */
import { channelTakes, NOISE, noticeBody, type IssueSummary } from '../domain/notifications.ts';
import type { Logger } from '../log.ts';
import type { JobPayloads, Queues } from '../queues/registry.ts';
import type { IssuesState } from '../state/issues.state.ts';
import type { NotifyState } from './notify.state.ts';
import type { IssueDoc } from '../store/issues.store.ts';
import type { ProjectsStore } from '../store/projects.store.ts';
import { makeTicker } from '../util/ticker.ts';
import type { ChannelCache } from './rules.ts';

const BATCH = 200;

function issueSummary(doc: IssueDoc, publicUrl: string): IssueSummary {
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
  issuesState: IssuesState;
  channels: ChannelCache;
  projects: ProjectsStore;
  queues: Queues;
  log: Logger;
  publicUrl: string;
  intervalMs: number;
}) {
  const { notify, log } = deps;

  async function dispatchProject(project: number, now: Date): Promise<void> {
    const channels = await deps.channels(project);
    const ref = { id: String(project), name: (await deps.projects.get(project))?.name ?? `project ${project}` };
    for (;;) {
      const entries = await notify.pending(project, BATCH);
      if (entries.length === 0) return;
      const issueIds = [...new Set(entries.map((e) => e.trigger.issue).filter((i): i is number => i !== undefined))];
      const issues = await deps.issuesState.issues(project, issueIds);
      const jobs: { payload: JobPayloads['notify.deliver']; jobId: string; delay?: number }[] = [];
      /** The digests this batch routed into: each is opened and enqueued once. */
      const digests = new Set<string>();
      for (const { id, trigger } of entries) {
        const issue = trigger.issue === undefined ? undefined : issues.get(trigger.issue);
        const summary = issue ? issueSummary(issue, deps.publicUrl) : null;
        for (const channel of channels.filter((c) => channelTakes({ ...c, id: c._id }, trigger))) {
          const delivery = `n${project}-${id}-c${channel._id}`;
          const body = noticeBody(trigger, delivery, ref, summary);
          const opened = { id: delivery, channel: channel._id, event: trigger.event, ...(trigger.issue !== undefined && { issue: trigger.issue }) };
          if (channel.paused_at) {
            await notify.openDelivery(project, { ...opened, status: 'paused' }, now);
            continue;
          }
          const route = await notify.route(project, channel._id, delivery, JSON.stringify(body), now, NOISE);
          if (route.send) {
            await notify.openDelivery(project, { ...opened, status: 'queued' }, now);
            jobs.push({ payload: { project, channel: channel._id, delivery, event: trigger.event, body }, jobId: delivery });
            continue;
          }
          await notify.openDelivery(project, { ...opened, status: 'in_digest', digest: route.digest }, now);
          if (digests.has(route.digest)) continue;
          digests.add(route.digest);
          await notify.openDelivery(project, { id: route.digest, channel: channel._id, event: 'digest', status: 'queued' }, now);
          const payload = { project, channel: channel._id, delivery: route.digest, event: 'digest' as const, project_name: ref.name };
          jobs.push({ payload, jobId: route.digest, delay: Math.max(0, route.due.getTime() - now.getTime()) });
        }
      }
      if (jobs.length > 0) await deps.queues.enqueueBulk('notify.deliver', jobs);
      await notify.dispatched(project, entries.at(-1)!.id);
    }
  }

  return makeTicker(
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
}
