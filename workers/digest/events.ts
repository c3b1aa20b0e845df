/**
 * Digesting an `events.process` job (src/queues/jobs/events.job.ts): the groups of events of one job applied to the
 * issues in Redis, per project, in these steps:
 *
 * 1. gather: each group's entries, from the job (the API's jobs) or read back from MongoDB (the sweeper's, by id);
 * 2. verify the project's Redis state (rebuilt first if Redis lost it: nothing is numbered on a state that moved);
 * 3. symbolicate: source maps applied to the flagged events' frames before they are grouped;
 * 4. number: each new fingerprint gets its issue number (a shared counter);
 * 5. apply: one script call (src/state/scripts/apply-events-4.lua) counts error events in their issues and records
 *    sign-in attempts in their groups, each group once by its id, and records the triggers of a project with
 *    notification channels in its outbox;
 * 6. record: regressions and ended ignores written to the issues' activity;
 * 7. detect: the burst detectors (src/domain/bursts.ts) over each touched group's and address's attempts; a burst
 *    found is recorded in its security issue with counts that only grow (src/services/bursts.service.ts);
 * 8. notify: the frequency rules over the issues the job touched, and the project marked for the dispatcher
 *    (src/notify/dispatcher.ts).
 *
 * Every step runs on every delivery, so a retry, a duplicate delivery or two workers on one group leave the same
 * result. The flusher (src/state/flusher.ts) then copies changed issues to MongoDB and takes the groups off the
 * backlog.
 */
import { issueKindOf } from '../../src/domain/csp.ts';
import { checkFrequency, notifyFlags } from '../../src/notify/rules.ts';
import { attemptEntry, entryOf, entryOfJob, type EventEntry, type EventsProcessPayload } from '../../src/queues/jobs/events.job.ts';
import type { BurstsService } from '../../src/services/bursts.service.ts';
import type { Symbolication } from '../../src/services/symbolication.ts';
import type { AppliedGroup } from '../../src/state/apply-events.ts';
import { ATTEMPT_KINDS } from '../../src/state/bursts.state.ts';
import type { IssuesState } from '../../src/state/issues.state.ts';
import type { TracesState } from '../../src/state/traces.state.ts';
import type { NotifyState } from '../../src/notify/notify.state.ts';
import { StateMovedError, type StateKeeper } from '../../src/state/rebuild.ts';
import type { ChannelDoc } from '../../src/store/channels.store.ts';
import type { Stores } from '../../src/store/index.ts';
import { groupBy } from '../../src/util/group-by.ts';
import { MINUTE_MS, timeKey, type TraceErrorsDoc } from '../../src/store/traces.store.ts';

/** What the handler uses, and nothing else. */
export interface EventsProcessDeps {
  issuesState: IssuesState;
  keeper: StateKeeper;
  stores: Pick<Stores, 'events' | 'activity' | 'traces'>;
  /** source maps applied to the flagged events' frames before they are grouped */
  symbolication: Pick<Symbolication, 'apply'>;
  /** the project's notification channels (cached for a second) */
  channels: (project: number) => Promise<ChannelDoc[]>;
  bursts: BurstsService;
  notify: NotifyState;
  /** numbers the trace-error documents in their minute (the trace page reads them by id) */
  tracesState: Pick<TracesState, 'number'>;
}

/** A project's part of one group of the job. */
interface ProjectPart {
  group: string;
  receivedAt: Date;
  events: EventEntry[];
}

export async function processEventGroups(payload: EventsProcessPayload, runtime: EventsProcessDeps, now: Date) {
  const { issuesState: state, keeper } = runtime;
  const { byProject, count } = await gather(payload, runtime.stores.events, now);
  for (const [project, parts] of byProject) {
    await keeper.verify(project, now);
    const all = parts.flatMap((p) => p.events);
    await runtime.symbolication.apply(project, all);
    const ids = await state.issueIds(
      project,
      all.filter((e) => e.kind === 'error').map((e) => e.fingerprint!),
    );
    const groups = parts.map((p) => appliedGroup(p, ids));
    const channels = await runtime.channels(project);
    const flags = notifyFlags(channels);
    const { code, changes } = await state.apply(project, groups, flags);
    if (code === 'unverified') throw new StateMovedError(project, 'the apply of its events');
    await runtime.stores.activity.changes(project, changes);
    // the error events that named a trace, for the trace page (issue 69)
    const byTrace = traceErrorDocs(parts, ids);
    const numbers = await runtime.tracesState.number('te', project, byTrace.map((d) => ({ minute: d.minute, group: d.group })), now.getTime());
    await runtime.stores.traces.writeTraceErrors(byTrace.map((d, i) => ({ _id: `${timeKey(project, d.minute)}:${numbers[i]}`, x: d.x })));
    const attempts = groups.flatMap((g) => g.attempts.map((a) => ({ attempt: a, receivedAt: g.receivedAt })));
    if (attempts.length > 0) await runtime.stores.activity.changes(project, await runtime.bursts.detect(project, attempts, flags));
    if (flags === '') continue;
    const touched = new Map(groups.flatMap((g) => g.errors.map((e) => [e.issue, { level: e.level, environment: e.environment }] as const)));
    await checkFrequency(runtime.notify, project, channels, touched, now);
    await runtime.notify.markProject(project);
  }
  await state.pending.noteApplied(
    [...byProject.keys()],
    payload.groups.map((g) => g.id),
  );
  return { projects: byProject.size, events: count };
}

/** Step 1: each project's part of each group; the API's jobs carry the events, the sweeper's only the group's id. */
async function gather(payload: EventsProcessPayload, events: Stores['events'], now: Date) {
  const byProject = new Map<number, ProjectPart[]>();
  let count = 0;
  const swept = payload.groups.filter((g) => !g.events).map((g) => g.id);
  const sweptEntries = groupBy(
    swept.length > 0 ? [...(await events.ofBatches(swept)).map((doc) => entryOf(doc)), ...(await events.attempts.ofBatches(swept)).map(attemptEntry)] : [],
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
  return { byProject, count };
}

/** Step 5's aside: a part's error events that named a trace, one document per minute they happened in. */
function traceErrorDocs(parts: ProjectPart[], ids: Map<string, number>): { minute: number; group: string; x: TraceErrorsDoc['x'] }[] {
  const docs = new Map<string, { minute: number; group: string; x: TraceErrorsDoc['x'] }>();
  for (const part of parts) {
    for (const e of part.events) {
      if (e.kind !== 'error' || !e.trace) continue;
      const [trace, span] = e.trace.split(':') as [string, string | undefined];
      const minute = Math.floor(e.at.getTime() / MINUTE_MS) * MINUTE_MS;
      const key = `${minute}:${part.group}`;
      const doc = docs.get(key) ?? docs.set(key, { minute, group: part.group, x: {} }).get(key)!;
      (doc.x[trace] ??= []).push({ id: e.event_id, at: e.at.getTime(), issue: ids.get(e.fingerprint!) ?? null, span_id: span ?? null });
    }
  }
  return [...docs.values()];
}

/** Step 5's input: a part's error events with their issue numbers, and its sign-in attempts. */
function appliedGroup(part: ProjectPart, ids: Map<string, number>): AppliedGroup {
  return {
    id: part.group,
    receivedAt: part.receivedAt,
    errors: part.events
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
        user: e.user,
        tags: e.tags,
      })),
    attempts: part.events
      .filter((e) => e.kind === 'security' && ATTEMPT_KINDS.has(e.security_kind ?? ''))
      .map((e) => ({ event_id: e.event_id, at: e.at, kind: e.security_kind!, actor: e.actor ?? '', group: e.group_key!, ip: e.ip ?? null })),
    packed: part.events.some((e) => e.kind === 'security'),
  };
}
