/**
 * Issues read and status API (spec 4.6–4.8) and an issue's events. Lists,
 * spreads and an issue's events are read from the ordered structures in
 * Redis (src/state/issue-reads.ts), documents by `_id` from MongoDB; a
 * status change goes through Redis.
 */
import { BadRequestError, NotFoundError } from '../errors.ts';
import { eventImpact } from '../domain/event-impact.ts';
import type { TriggerRecord } from '../domain/notifications.ts';
import type { ActivityStore, NewActivity } from '../store/activity.store.ts';
import { listPlan, parseSearch } from '../domain/search.ts';
import type { IssueReads } from '../state/issue-reads.ts';
import type { IssueListQuery, IssueStatusBody } from '../generated/schema-types.ts';
import type { StateKeeper } from '../state/rebuild.ts';
import type { IssuesState } from '../state/issues.state.ts';
import { HOUR_MS, hourIndex } from '../state/issue-hash.ts';
import type { AttemptKey } from '../store/attempts.store.ts';
import { eventKey, type EventDoc, type EventsStore } from '../store/events.store.ts';
import type { IssueDoc, IssuesStore } from '../store/issues.store.ts';
import type { FeedbackService } from './feedback.service.ts';
import { activityView, attachmentView, attemptSummary, eventSummary, issueView } from './issue-views.ts';
import type { AttachmentsStore } from '../store/attachments.store.ts';

/** A status change as schemas/issue-status.json reads it. */
export type StatusChange = IssueStatusBody;

/** The script's mode for a change (set-issue-status-3.lua): a resolve until a newer release, an ignore until a count or a time. */
function statusMode(change: StatusChange, now: Date): string {
  const { status, in_next_release, until_count, until } = change;
  const misplaced = (what: string, on: string) => new BadRequestError('invalid_status_change', `${what} goes with status ${on}`);
  if (in_next_release && status !== 'resolved') throw misplaced('in_next_release', 'resolved');
  if ((until_count !== undefined || until !== undefined) && status !== 'ignored') throw misplaced('until_count and until', 'ignored');
  if (until_count !== undefined && until !== undefined) throw new BadRequestError('invalid_status_change', 'an ignore lasts until a count or a time, not both');
  if (in_next_release) return 'next';
  if (until_count !== undefined) return `count:${until_count}`;
  if (until !== undefined) {
    const ms = Date.parse(until);
    if (!(ms > now.getTime())) throw new BadRequestError('invalid_status_change', 'until must be a time to come');
    return `until:${ms}`;
  }
  return '';
}

export function makeIssuesService(deps: {
  issues: IssuesStore;
  events: EventsStore;
  state: IssuesState;
  reads: IssueReads;
  keeper: StateKeeper;
  feedback: FeedbackService;
  attachments: AttachmentsStore;
  activity: ActivityStore;
  /** tells the notification dispatcher the project's outbox has something */
  notifyProject: (project: number) => Promise<unknown>;
  /** marks an event's frames whose source map was uploaded after it */
  uploadedSince: (project: number, event: Record<string, unknown>) => Promise<void>;
}) {
  const { issues, events, state, reads, keeper } = deps;
  const notFound = (id: number) => new NotFoundError('issue_not_found', `no issue ${id} in this project`);
  const eventNotFound = (id: string) => new NotFoundError('event_not_found', `no event ${id} in this issue`);

  /** Writes the issues as Redis holds them now to MongoDB, so the next read sees the change. */
  async function flushIssues(projectId: number, ids: number[]) {
    if (ids.length === 0) return;
    const snap = await state.snapshot(projectId, { ids });
    await issues.writeFlushed(
      projectId,
      snap.issues.map((i) => i.doc),
      snap.seq,
    );
  }

  /**
   * Issues by id, from MongoDB by `_id`; one the flusher has listed and not yet written (between its snapshot and
   * its write, about a second, longer while a write fails) as its hash in Redis holds it, so that an issue the list
   * shows can be opened and acted on at once. Another project's is left out; the order is not kept.
   */
  async function issuesOf(projectId: number, ids: number[]): Promise<IssueDoc[]> {
    const stored = await issues.getMany(projectId, ids);
    const missing = ids.filter((id) => !stored.some((d) => d._id === id));
    return missing.length === 0 ? stored : [...stored, ...(await state.issues(projectId, missing)).values()];
  }

  /** The issue (issuesOf); another project's is not found. */
  async function issueOf(projectId: number, id: number): Promise<IssueDoc> {
    const [issue] = await issuesOf(projectId, [id]);
    if (!issue) throw notFound(id);
    return issue;
  }

  /** The status set in Redis; answers the activity entry to record once the issue is written to MongoDB. */
  async function statusSet(projectId: number, id: number, change: StatusChange, by: string | null, now: Date): Promise<NewActivity> {
    const mode = statusMode(change, now);
    // Nothing changes while the state is unverified, so calling again is safe.
    const result = await keeper.verified(projectId, now, () => state.setStatus(projectId, id, change.status, now, mode));
    if (result === 'not_found') throw notFound(id);
    const how = Object.fromEntries(Object.entries(change).filter(([k]) => k !== 'status'));
    return { at: now, kind: 'status', by, data: { status: change.status, ...how } };
  }

  /** The assignee set in Redis (with its notification); the activity entry to record, or null when it was already so. */
  async function assigneeSet(projectId: number, id: number, assignee: string | null, by: string, now: Date): Promise<NewActivity | null> {
    const issue = await issueOf(projectId, id);
    const trigger: TriggerRecord = { event: 'issue.assigned', issue: id, at: now.getTime(), level: issue.level, assignee, by };
    const result = await keeper.verified(projectId, now, () => state.assign(projectId, id, assignee ?? '', trigger));
    if (result === 'not_found') throw notFound(id);
    return result.was === (assignee ?? '') ? null : { at: now, kind: 'assigned', by, data: { assignee, was: result.was || null } };
  }

  return {
    /**
     * A page of the list. Its parameters and its `search` (src/domain/search.ts) say what it matches; what it could
     * not apply is named in the answer. `me`: the signed-in member, for `assigned:me`. `rows: 'bare'`: the issues
     * without their last 24 hours, feedback, users and matching events (empty, 0, 0, null), for reads that need only which.
     */
    async list(projectId: number, asked: IssueListQuery, me: string | null = null, now = new Date(), rows: 'full' | 'bare' = 'full') {
      // `query` is what every Sentry tool sends, in Sentry's syntax; `search` is another name for it (issue 66)
      const said = [asked.query, asked.search].filter((q): q is string => q !== undefined && q !== '').join(' ');
      const search = parseSearch(said);
      // the list's own parameters are terms of the search too
      for (const field of ['level', 'release', 'environment', 'company'] as const) {
        const value = asked[field];
        if (value !== undefined) search.terms.push({ kind: 'field', field, value, negated: false });
      }
      const { plan, unknown } = listPlan(search, { me, now }, asked.status);
      if (asked.kind !== undefined) plan.sets.push({ set: `fk:${asked.kind}`, counted: true });
      const page = await keeper.verified(projectId, now, () => reads.list(projectId, { plan, order: asked.order, offset: asked.offset, limit: asked.limit, bare: rows === 'bare' }, now));
      const filters = Object.fromEntries(
        (['kind', 'release', 'environment', 'level', 'company', 'query'] as const).filter((f) => asked[f] !== undefined).map((f) => [f, asked[f]]),
      );
      return {
        issues: page.items.map(({ doc, last24h, feedback, users, matching }) => ({
          ...issueView(doc),
          events_24h: last24h,
          user_feedback: feedback,
          users,
          matching_events: matching,
        })),
        total: page.total,
        // a search only a walk of the list can count, in a large project: the total from the share of a part that matched
        ...(page.estimated && { total_estimated: true }),
        limit: asked.limit,
        offset: asked.offset,
        order: asked.order,
        status: plan.status,
        ...filters,
        ...((asked.search !== undefined || asked.query !== undefined) && { search: { search: said, unknown } }),
      };
    },

    /** How many issues are unresolved. */
    async openCount(projectId: number, now: Date): Promise<number> {
      const page = await keeper.verified(projectId, now, () =>
        reads.list(projectId, { plan: { status: 'unresolved', sets: [], not: [], ranges: [] }, order: 'id', offset: 0, limit: 1 }, now),
      );
      return page.total;
    },

    /** Per release: how many issues have an event of it, and how many were first seen in it. */
    releaseIssues: (projectId: number, releases: string[]) => reads.releaseIssues(projectId, releases),

    /** The releases the project's events named, each with the time of its first event. */
    releasesSeen: (projectId: number) => reads.releasesSeen(projectId),

    /** A release's new issues (first seen in it) and those that last regressed in it: the 10 seen last of each, and how many. */
    async ofRelease(projectId: number, release: string) {
      const found = await reads.ofRelease(projectId, release, 100);
      const page = async ({ total, ids }: { total: number; ids: number[] }) => {
        const docs = await issuesOf(projectId, ids);
        docs.sort((a, b) => b.last_seen.getTime() - a.last_seen.getTime());
        return { total, issues: docs.slice(0, 10).map(issueView) };
      };
      return { new: await page(found.new), regressed: await page(found.regressed) };
    },

    /** The issue, its latest event's payload, where its events come from and their hourly counts (24 hours and 14 days). */
    async get(projectId: number, id: number, now = new Date()) {
      const issue = await issueOf(projectId, id);
      const [latest, spread, hours, feedback, users] = await Promise.all([
        issue.latest_event ? events.body(issue.latest_event) : null,
        reads.spread(projectId, id, 10),
        reads.hourly(projectId, id, 14 * 24, now),
        reads.feedback(projectId, id, 0, 0),
        reads.users(projectId, id),
      ]);
      if (latest) await deps.uploadedSince(projectId, latest);
      return {
        ...issueView(issue),
        user_feedback: feedback.total,
        users,
        latest_event: latest,
        // Its latest event was deleted by retention (the issue and its counts stay).
        latest_event_expired: issue.latest_event !== null && latest === null,
        spread,
        hourly: { until: new Date((hourIndex(now) + 1) * HOUR_MS).toISOString(), last_24h: hours.slice(-24), last_14d: hours },
      };
    },

    /** The issue and how many users it has seen, without its events (what lists show of it). */
    async summary(projectId: number, id: number) {
      const [issue, users] = await Promise.all([issueOf(projectId, id), reads.users(projectId, id)]);
      return { ...issueView(issue), users };
    },

    /** Answers not found unless the project has the issue. */
    async mustExist(projectId: number, id: number): Promise<void> {
      await issueOf(projectId, id);
    },

    /** A page of the issue's user feedback, newest first. */
    async feedback(projectId: number, id: number, offset: number, limit: number) {
      await issueOf(projectId, id);
      return deps.feedback.ofIssue(projectId, id, offset, limit);
    },

    /** A page of the issue's events, newest first: an error issue's events, a security issue's sign-in attempts. */
    async events(projectId: number, id: number, offset: number, limit: number) {
      await issueOf(projectId, id);
      const page = await reads.events(projectId, id, offset, limit);
      const docs = await events.getMany(page.ids.map((e) => eventKey(projectId, e)));
      const keys = docs.filter((d): d is AttemptKey => !('payload' in d));
      const rows = new Map<string, ReturnType<typeof eventSummary> | ReturnType<typeof attemptSummary>>([
        ...docs.filter((d): d is EventDoc => 'payload' in d).map((d) => [d.event_id, eventSummary(d)] as const),
        ...(keys.length ? await events.attempts.ofKeys(keys) : []).map((a) => [a.event_id, attemptSummary(a)] as const),
      ]);
      // An event counted but deleted since (retention) is left out of the page.
      const found = page.ids.flatMap((e) => rows.get(e) ?? []);
      return { events: found, total: page.total, limit, offset };
    },

    /** The newest `n` events of these issues together (none before `since`, ms), newest first, each with its issue and stored document. */
    async newestEvents(projectId: number, ids: number[], n: number, since = 0) {
      const newest = await reads.newestEvents(projectId, ids, n, since);
      const docs = new Map((await events.getMany(newest.map((e) => eventKey(projectId, e.id)))).flatMap((d) => ('payload' in d ? [[d.event_id, d] as const] : [])));
      return newest.flatMap((e) => (docs.has(e.id) ? [{ issue: e.issue, doc: docs.get(e.id)! }] : []));
    },

    /** One event of the issue, whole, with its place among the issue's events and the newer and older one. */
    async event(projectId: number, id: number, eventId: string) {
      await issueOf(projectId, id);
      // an error event's stored body, or a sign-in attempt's from its group's document
      const [event, place, files] = await Promise.all([
        events.body(eventKey(projectId, eventId)),
        reads.neighbours(projectId, id, eventId),
        deps.attachments.ofEvent(projectId, eventId),
      ]);
      if (!event || !place) throw eventNotFound(eventId);
      await deps.uploadedSince(projectId, event);
      const tags = 'security' in event ? [] : eventImpact(event).tags.map((t) => ({ key: t.slice(0, t.indexOf('=')), value: t.slice(t.indexOf('=') + 1) }));
      return { issue_id: String(id), index: place.index, newer: place.newer, older: place.older, event, tags, attachments: files.map(attachmentView) };
    },

    /** One attachment of one of the issue's events, with its bytes (null when it was not kept). */
    async attachment(projectId: number, id: number, eventId: string, slot: number) {
      await issueOf(projectId, id);
      if ((await reads.neighbours(projectId, id, eventId)) === null) throw eventNotFound(eventId);
      const doc = await deps.attachments.get(projectId, eventId, slot);
      if (!doc) throw new NotFoundError('attachment_not_found', `no attachment ${slot} on event ${eventId}`);
      return { ...attachmentView(doc), data: doc.data ? Buffer.from(doc.data.buffer) : null };
    },

    /**
     * Sets the status in Redis, then writes the issue to MongoDB before answering, so the next read sees it, and
     * records who did it in the issue's activity. A resolve may last until a newer release; an ignore until so many
     * more events or a time.
     */
    async setStatus(projectId: number, id: number, change: StatusChange, by: string | null, now: Date) {
      const entry = await statusSet(projectId, id, change, by, now);
      await flushIssues(projectId, [id]);
      await deps.activity.add(projectId, id, entry);
      return { ok: true as const, status: change.status };
    },

    /** Assigns the issue to a member of the organisation (`assignee`, checked by the caller) or to no one (null). */
    async assign(projectId: number, id: number, assignee: string | null, by: string, now: Date) {
      const entry = await assigneeSet(projectId, id, assignee, by, now);
      if (entry) {
        await flushIssues(projectId, [id]);
        await deps.activity.add(projectId, id, entry);
        await deps.notifyProject(projectId);
      }
      return { ok: true as const, assignee };
    },

    /** Adds a comment (Markdown) to the issue's activity. */
    async comment(projectId: number, id: number, text: string, by: string, now: Date) {
      await issueOf(projectId, id);
      return activityView(await deps.activity.add(projectId, id, { at: now, kind: 'comment', by, data: { text } }));
    },

    /** The issue's activity, newest first, ending with its first event. */
    async activity(projectId: number, id: number) {
      const issue = await issueOf(projectId, id);
      const entries = await deps.activity.ofIssue(projectId, id, issue.regression_count);
      const first = { id: 'first_seen', at: issue.first_seen.toISOString(), kind: 'first_seen', by: null, data: { release: issue.first_release ?? null } };
      return { activity: [...entries.map(activityView), first] };
    },

    /**
     * One change to many issues of the project: a status, an assignee, or both; each issue as if changed on its own.
     * An id the project does not have is named in `not_found`, and the others are changed.
     */
    async bulk(projectId: number, ids: number[], change: { status?: StatusChange; assignee?: string | null }, by: string, now: Date) {
      const notFoundIds: string[] = [];
      const entries: [number, NewActivity][] = [];
      for (const id of new Set(ids)) {
        try {
          if (change.status) entries.push([id, await statusSet(projectId, id, change.status, by, now)]);
          const assigned = change.assignee === undefined ? null : await assigneeSet(projectId, id, change.assignee, by, now);
          if (assigned) entries.push([id, assigned]);
        } catch (err) {
          if (!(err instanceof NotFoundError)) throw err;
          notFoundIds.push(String(id));
        }
      }
      // every changed issue written to MongoDB at once, then their activity
      await flushIssues(projectId, [...new Set(entries.map(([id]) => id))]);
      for (const [id, entry] of entries) await deps.activity.add(projectId, id, entry);
      if (entries.some(([, e]) => e.kind === 'assigned')) await deps.notifyProject(projectId);
      return { ok: true as const, changed: new Set(ids).size - notFoundIds.length, not_found: notFoundIds };
    },
  };
}
export type IssuesService = ReturnType<typeof makeIssuesService>;
