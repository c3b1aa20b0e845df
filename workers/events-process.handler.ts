/**
 * events.process: applies the groups of events of one job to the issues in
 * Redis. The API gathers the groups it stored over a few milliseconds into
 * one job (src/services/events.service.ts). Per project, one script call
 * (src/state/scripts/apply-events-4.lua) counts error events in their issues
 * and records sign-in attempts in their groups' sorted sets, each group once
 * by its id. Then the burst detectors (src/domain/bursts.ts) run over each
 * touched group's and address's attempts in the look-back, read in one round
 * trip (src/services/bursts.service.ts), and each burst found is recorded in
 * its security issue with counts that only grow, so a retry, a duplicate delivery or two workers on
 * one burst leave the same result. The flusher copies changed issues to
 * MongoDB and takes the group off the backlog.
 *
 * For a project with notification channels, the scripts also record the
 * triggers (new issue, regression, burst) in its outbox, the frequency rules
 * are checked over the issues the job touched, and the project is marked for
 * the dispatcher (src/notify/dispatcher.ts), on every delivery of the job.
 */
import { issueKindOf } from '../src/domain/csp.ts';
import type { JobPayloads } from '../src/queues/registry.ts';
import type { Runtime } from '../src/runtime.ts';
import { entryOfJob, type EventEntry } from '../src/queues/jobs/events-process.ts';
import { attemptEntry, entryOf } from '../src/services/events.service.ts';
import { ATTEMPT_KINDS } from '../src/state/bursts.state.ts';
import type { AppliedGroup } from '../src/state/issues.state.ts';
import { checkFrequency, notifyFlags } from '../src/notify/rules.ts';
import { groupBy } from '../src/util/group-by.ts';
import { StateMovedError } from '../src/state/rebuild.ts';

/** What the handler uses of the runtime, and nothing else. */
export type EventsProcessDeps = Pick<Runtime, 'issuesState' | 'keeper' | 'stores' | 'channels' | 'bursts' | 'notify'>;

export async function processEventGroups(payload: JobPayloads['events.process'], runtime: EventsProcessDeps, now: Date) {
  const { issuesState: state, keeper } = runtime;
  // Per project, its part of each group: the API's jobs carry the events, the sweeper's only the group's id.
  const byProject = new Map<number, { group: string; receivedAt: Date; events: EventEntry[] }[]>();
  let count = 0;
  const swept = payload.groups.filter((g) => !g.events).map((g) => g.id);
  const sweptEntries = groupBy(
    swept.length > 0
      ? [...(await runtime.stores.events.ofBatches(swept)).map((doc) => entryOf(doc)), ...(await runtime.stores.events.attempts.ofBatches(swept)).map(attemptEntry)]
      : [],
    (entry) => entry.batch,
  );
  for (const group of payload.groups) {
    const stored = group.events ? null : (sweptEntries.get(group.id) ?? []);
    const entries: EventEntry[] = group.events?.map((event) => entryOfJob(event, group)) ?? stored!;
    const receivedAt = new Date(group.received_at ?? stored?.[0]?.received_at ?? now);
    count += entries.length;
    for (const [project, list] of groupBy(entries, (e) => e.project_id)) {
      const parts = byProject.get(project) ?? [];
      parts.push({ group: group.id, receivedAt, events: list });
      byProject.set(project, parts);
    }
  }

  for (const [project, parts] of byProject) {
    // Verified before issue ids are read: a Redis that lost its fingerprint map must be rebuilt before anything is numbered.
    await keeper.verify(project, now);
    const all = parts.flatMap((p) => p.events);
    const ids = await state.issueIds(project, all.filter((e) => e.kind === 'error').map((e) => e.fingerprint!));
    const groups: AppliedGroup[] = parts.map((p) => ({
      id: p.group,
      receivedAt: p.receivedAt,
      errors: p.events
        .filter((e) => e.kind === 'error')
        .map((e) => ({
          event: e._id,
          issue: ids.get(e.fingerprint!)!,
          issue_kind: issueKindOf(e.exception_type),
          at: e.at,
          release: e.release,
          environment: e.environment ?? null,
          level: e.level,
          title: e.title,
          culprit: e.culprit ?? '',
          exception_type: e.exception_type,
          company: e.company ?? null,
          fingerprint: e.fingerprint!,
        })),
      attempts: p.events
        .filter((e) => e.kind === 'security' && ATTEMPT_KINDS.has(e.security_kind ?? ''))
        .map((e) => ({ event_id: e.event_id, at: e.at, kind: e.security_kind!, actor: e.actor ?? '', group: e.group_key!, ip: e.ip ?? null })),
      packed: p.events.some((e) => e.kind === 'security'),
    }));
    const channels = await runtime.channels(project);
    const flags = notifyFlags(channels);
    const code = await state.apply(project, groups, flags);
    if (code === 'unverified') throw new StateMovedError(project, 'the apply of its events');
    // Detection runs on every delivery: a worker that died after the script but before this step is retried.
    const attempts = groups.flatMap((g) => g.attempts.map((a) => ({ attempt: a, receivedAt: g.receivedAt })));
    if (attempts.length > 0) await runtime.bursts.detect(project, attempts, flags);
    if (flags === '') continue;
    const touched = new Map(groups.flatMap((g) => g.errors.map((e) => [e.issue, { level: e.level, environment: e.environment }] as const)));
    await checkFrequency(runtime.notify, project, channels, touched, now);
    await runtime.notify.markProject(project);
  }
  await state.pending.noteApplied([...byProject.keys()], payload.groups.map((g) => g.id));
  return { projects: byProject.size, events: count };
}
