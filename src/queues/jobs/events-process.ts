/**
 * The `events.process` job: its payload (groups of events, each event in its job form, what the worker cannot derive
 * from the group), its dedupe id, and its handler. The API's group commit writes it (src/services/events.service.ts).
 *
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
import { issueKindOf } from '../../domain/csp.ts';
import { attemptGroupKey } from '../../domain/client-keys.ts';
import { eventImpact, type EventImpact } from '../../domain/event-impact.ts';
import { describeError, type ErrorEventShape } from '../../domain/fingerprint.ts';
import type { Obj } from '../../domain/obj.ts';
import { checkFrequency, notifyFlags } from '../../notify/rules.ts';
import type { BurstsService } from '../../services/bursts.service.ts';
import { ATTEMPT_KINDS } from '../../state/bursts.state.ts';
import type { AppliedGroup, IssueChange } from '../../state/apply-events.ts';
import type { ActivityStore } from '../../store/activity.store.ts';
import type { IssuesState } from '../../state/issues.state.ts';
import type { NotifyState } from '../../state/notify.state.ts';
import { StateMovedError, type StateKeeper } from '../../state/rebuild.ts';
import { attemptFields, type AttemptBody, type StoredAttempt } from '../../store/attempts.store.ts';
import type { ChannelDoc } from '../../store/channels.store.ts';
import type { Symbolication } from '../../services/symbolication.ts';
import { eventKey, payloadOf, type EventDoc } from '../../store/events.store.ts';
import type { Stores } from '../../store/index.ts';
import { groupBy } from '../../util/group-by.ts';

/** Groups of events; the API's jobs carry the events, the sweeper's only each group's id. */
export interface EventsProcessPayload {
  groups: { id: string; received_at?: string; events?: JobEvent[] }[];
}

/** What a worker needs of a stored event: everything but the payload, plus what grouping and its issue's counts read from it. */
export type EventEntry = Omit<EventDoc, 'payload'> & { level: string; title: string; culprit: string; exception_type: string | null } & Partial<EventImpact>;

/** An event as its job carries it: what the worker cannot derive (`entryOfJob`). */
export type JobEvent = Pick<EventEntry, 'project_id' | 'event_id' | 'kind'> & Partial<Omit<EventEntry, 'at'>> & { at: Date | string };

/** Defaults the job form leaves out. */
const ENTRY_DEFAULTS = { release: null, environment: null, company: null, level: 'error', title: '', culprit: '', exception_type: null } as const;

/**
 * The job form of an entry: without its key, group, time received (the group's) and an attempt's group key (its
 * actor and address), and without the fields that hold their default. About a third of a sign-in attempt's entry:
 * the events' jobs were a fifth of what Redis wrote to its append-only file (docs/performance.md).
 */
export function jobEvent(entry: EventEntry): JobEvent {
  const { _id, batch, received_at, group_key, ...rest } = entry;
  const kept = Object.entries(rest).filter(([field, value]) => value !== undefined && value !== ENTRY_DEFAULTS[field as keyof typeof ENTRY_DEFAULTS]);
  return Object.fromEntries(kept) as JobEvent;
}

/** The entry a job's event stands for, in the group it came in (a job added before the job form carries entries whole). */
export function entryOfJob(event: JobEvent, group: { id: string; received_at?: string }): EventEntry {
  return {
    ...ENTRY_DEFAULTS,
    ...event,
    _id: eventKey(event.project_id, event.event_id),
    batch: group.id,
    at: new Date(event.at),
    received_at: new Date(group.received_at ?? event.received_at ?? event.at),
    ...(event.kind === 'security' && { group_key: attemptGroupKey(event.actor ?? null, event.ip ?? null) }),
  };
}

export function groupJobId(id: string): string {
  return `eg-${id}`;
}

/** The entry of a stored error event (its body read from the document unless given). */
export function entryOf(doc: EventDoc, body: ErrorEventShape & { level?: string } = payloadOf(doc) as ErrorEventShape): EventEntry {
  const { payload: _, ...rest } = doc;
  if (doc.kind !== 'error') return { ...rest, level: body.level ?? 'error', title: '', culprit: '', exception_type: null };
  // its user and tags only when it has some: the job form carries no empty field
  const { user, tags } = eventImpact(body as Obj);
  return { ...rest, level: body.level ?? 'error', ...describeError(body), ...(user && { user }), ...(tags.length > 0 && { tags }) };
}

/** The entry of a sign-in attempt received at `receivedAt`. */
export function attemptEntryOf(project: number, body: AttemptBody, receivedAt: Date): EventEntry {
  const { event_id, at, security_kind, actor, ip, group_key, release, environment, company } = attemptFields(body);
  return {
    _id: eventKey(project, event_id),
    project_id: project,
    event_id,
    batch: '',
    kind: 'security',
    security_kind,
    actor,
    ip,
    group_key,
    release,
    environment,
    company,
    at,
    received_at: receivedAt,
    level: (body.level as string | undefined) ?? 'error',
    title: '',
    culprit: '',
    exception_type: null,
  };
}

/** What a worker needs of a stored attempt (a swept group's, read back). */
export function attemptEntry(a: StoredAttempt): EventEntry {
  return { ...attemptEntryOf(a.project_id, a.body, a.received_at), batch: a.batch };
}

/** What the handler uses, and nothing else. */
export interface EventsProcessDeps {
  issuesState: IssuesState;
  keeper: StateKeeper;
  stores: Pick<Stores, 'events' | 'activity'>;
  /** source maps applied to the flagged events' frames before they are grouped */
  symbolication: Pick<Symbolication, 'apply'>;
  /** the project's notification channels (cached for a second) */
  channels: (project: number) => Promise<ChannelDoc[]>;
  bursts: BurstsService;
  notify: NotifyState;
}

/**
 * An issue's regressions and ended ignores, in its activity. A regression is written under its number, so a retry
 * writes it once; an ignore that ended is lost from the activity if the worker dies right after applying it.
 */
async function recordChanges(activity: ActivityStore, project: number, changes: IssueChange[]): Promise<void> {
  for (const c of changes) {
    if (c.what === 'regressed') {
      await activity.regressed(project, c.issue, c.n, { at: c.at, kind: 'regressed', by: null, data: { release: c.release, regression_kind: c.regression_kind } });
    } else {
      await activity.add(project, c.issue, { at: c.at, kind: 'unignored', by: null, data: { release: c.release, event_count: c.n } });
    }
  }
}

export async function processEventGroups(payload: EventsProcessPayload, runtime: EventsProcessDeps, now: Date) {
  const { issuesState: state, keeper } = runtime;
  // Per project, its part of each group: the API's jobs carry the events, the sweeper's only the group's id.
  const byProject = new Map<number, { group: string; receivedAt: Date; events: EventEntry[] }[]>();
  let count = 0;
  const swept = payload.groups.filter((g) => !g.events).map((g) => g.id);
  const sweptEntries = groupBy(
    swept.length > 0
      ? [
          ...(await runtime.stores.events.ofBatches(swept)).map((doc) => entryOf(doc)),
          ...(await runtime.stores.events.attempts.ofBatches(swept)).map(attemptEntry),
        ]
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
    await runtime.symbolication.apply(project, all);
    const ids = await state.issueIds(
      project,
      all.filter((e) => e.kind === 'error').map((e) => e.fingerprint!),
    );
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
          user: e.user,
          tags: e.tags,
        })),
      attempts: p.events
        .filter((e) => e.kind === 'security' && ATTEMPT_KINDS.has(e.security_kind ?? ''))
        .map((e) => ({ event_id: e.event_id, at: e.at, kind: e.security_kind!, actor: e.actor ?? '', group: e.group_key!, ip: e.ip ?? null })),
      packed: p.events.some((e) => e.kind === 'security'),
    }));
    const channels = await runtime.channels(project);
    const flags = notifyFlags(channels);
    const { code, changes } = await state.apply(project, groups, flags);
    if (code === 'unverified') throw new StateMovedError(project, 'the apply of its events');
    await recordChanges(runtime.stores.activity, project, changes);
    // Detection runs on every delivery: a worker that died after the script but before this step is retried.
    const attempts = groups.flatMap((g) => g.attempts.map((a) => ({ attempt: a, receivedAt: g.receivedAt })));
    if (attempts.length > 0) await recordChanges(runtime.stores.activity, project, await runtime.bursts.detect(project, attempts, flags));
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
