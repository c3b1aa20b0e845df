/**
 * Issues read and status API (spec 4.6–4.8) and an issue's events. Lists,
 * spreads and an issue's events are read from the ordered structures in
 * Redis (src/state/issue-reads.ts), documents by `_id` from MongoDB; a
 * status change goes through Redis.
 */
import type { IssueStatus } from '../domain/issue-status.ts';
import { NotFoundError } from '../errors.ts';
import { listFilters, parseSearch } from '../domain/search.ts';
import type { IssueListQuery, IssueReads } from '../state/issue-reads.ts';
import type { StateKeeper } from '../state/rebuild.ts';
import type { IssuesState } from '../state/issues.state.ts';
import { HOUR_MS, hourIndex } from '../state/issue-hash.ts';
import type { AttemptKey, StoredAttempt } from '../store/attempts.store.ts';
import { eventKey, payloadOf, type EventDoc, type EventsStore } from '../store/events.store.ts';
import type { IssueDoc, IssuesStore } from '../store/issues.store.ts';
import type { FeedbackService } from './feedback.service.ts';
import type { AttachmentInfo, AttachmentsStore } from '../store/attachments.store.ts';

export function issueView(issue: IssueDoc) {
  return {
    id: String(issue._id),
    kind: issue.kind,
    title: issue.title,
    culprit: issue.culprit ?? '',
    exception_type: issue.exception_type,
    level: issue.level,
    status: issue.status,
    first_seen: issue.first_seen.toISOString(),
    last_seen: issue.last_seen.toISOString(),
    event_count: issue.event_count,
    last_release: issue.last_release,
    regression_count: issue.regression_count,
    resolved_count: issue.resolved_count,
    last_regressed_at: issue.last_regressed_at?.toISOString() ?? null,
    last_regression_kind: issue.last_regression_kind,
    companies: issue.companies,
    policy: issue.policy ?? null,
  };
}

/** A row of a security issue's attempts: when, what, who, from where, with what. */
function attemptSummary(a: StoredAttempt) {
  const security = a.body.security as { user_agent?: string };
  return {
    event_id: a.event_id,
    timestamp: a.at.toISOString(),
    received_at: a.received_at.toISOString(),
    kind: a.security_kind,
    outcome: a.security_kind === 'login_succeeded' ? 'succeeded' : 'failed',
    actor: a.actor,
    ip: a.ip,
    user_agent: security.user_agent ?? null,
  };
}

/** What a page of an issue's events shows of each: enough to pick one, not its whole payload. */
function eventSummary(doc: EventDoc) {
  const p = payloadOf(doc);
  const user = p.user as Record<string, unknown> | undefined;
  return {
    event_id: doc.event_id,
    timestamp: doc.at.toISOString(),
    received_at: doc.received_at.toISOString(),
    release: doc.release,
    environment: doc.environment ?? (p.environment as string | undefined) ?? null,
    level: (p.level as string | undefined) ?? null,
    message: (p.message as string | undefined) ?? null,
    user: user ? { id: user.id ?? null, email: user.email ?? null, username: user.username ?? null } : null,
    tags: (p.tags as Record<string, string> | undefined) ?? {},
  };
}

/** What an event shows of an attachment: enough to pick it, and whether its bytes were kept. */
function attachmentView(a: AttachmentInfo) {
  return {
    slot: a.slot,
    filename: a.filename,
    content_type: a.content_type,
    attachment_type: a.attachment_type,
    size: a.size,
    kept: !a.dropped,
    ...(a.dropped ? { dropped: a.dropped } : {}),
  };
}

export function makeIssuesService(deps: {
  issues: IssuesStore;
  events: EventsStore;
  state: IssuesState;
  reads: IssueReads;
  keeper: StateKeeper;
  feedback: FeedbackService;
  attachments: AttachmentsStore;
}) {
  const { issues, events, state, reads, keeper } = deps;
  const notFound = (id: number) => new NotFoundError('issue_not_found', `no issue ${id} in this project`);
  const eventNotFound = (id: string) => new NotFoundError('event_not_found', `no event ${id} in this issue`);

  /** The issue, from MongoDB by `_id`; another project's is not found. */
  async function issueOf(projectId: number, id: number): Promise<IssueDoc> {
    const issue = await issues.get(projectId, id);
    if (!issue) throw notFound(id);
    return issue;
  }

  return {
    /** A page of the list; a `search` sets its filters (src/domain/search.ts), and what it could not apply is named. */
    async list(projectId: number, asked: IssueListQuery, now = new Date()) {
      let q = asked;
      let search: { search: string; unknown: { term: string; reason: string }[] } | undefined;
      if (asked.search !== undefined) {
        const { filters, unknown } = listFilters(parseSearch(asked.search));
        for (const [name, value] of Object.entries(filters)) {
          if (value.length > 200) {
            unknown.push({ term: `${name}:${value.slice(0, 40)}…`, reason: 'longer than 200 characters' });
            delete filters[name as keyof typeof filters];
          }
        }
        q = { ...asked, ...filters };
        search = { search: asked.search, unknown };
      }
      const page = await keeper.verified(projectId, now, () => reads.list(projectId, q, now));
      const filters = Object.fromEntries(
        (['kind', 'release', 'environment', 'level', 'company', 'query'] as const).filter((f) => q[f] !== undefined).map((f) => [f, q[f]]),
      );
      return {
        issues: page.items.map(({ doc, last24h, feedback }) => ({ ...issueView(doc), events_24h: last24h, user_feedback: feedback })),
        total: page.total,
        limit: q.limit,
        offset: q.offset,
        order: q.order,
        ...filters,
        ...(search && { search }),
      };
    },

    /** The issue, its latest event's payload, where its events come from and their hourly counts (24 hours and 14 days). */
    async get(projectId: number, id: number, now = new Date()) {
      const issue = await issueOf(projectId, id);
      const [latest, spread, hours, feedback] = await Promise.all([
        issue.latest_event ? events.body(issue.latest_event) : null,
        reads.spread(projectId, id, 10),
        reads.hourly(projectId, id, 14 * 24, now),
        reads.feedback(projectId, id, 0, 0),
      ]);
      return {
        ...issueView(issue),
        user_feedback: feedback.total,
        latest_event: latest,
        // Its latest event was deleted by retention (the issue and its counts stay).
        latest_event_expired: issue.latest_event !== null && latest === null,
        spread,
        hourly: { until: new Date((hourIndex(now) + 1) * HOUR_MS).toISOString(), last_24h: hours.slice(-24), last_14d: hours },
      };
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
      return { issue_id: String(id), index: place.index, newer: place.newer, older: place.older, event, attachments: files.map(attachmentView) };
    },

    /** One attachment of one of the issue's events, with its bytes (null when it was not kept). */
    async attachment(projectId: number, id: number, eventId: string, slot: number) {
      await issueOf(projectId, id);
      if ((await reads.neighbours(projectId, id, eventId)) === null) throw eventNotFound(eventId);
      const doc = await deps.attachments.get(projectId, eventId, slot);
      if (!doc) throw new NotFoundError('attachment_not_found', `no attachment ${slot} on event ${eventId}`);
      return { ...attachmentView(doc), data: doc.data ? Buffer.from(doc.data.buffer) : null };
    },

    /** Sets the status in Redis, then writes the issue to MongoDB before answering, so the next read sees it. */
    async setStatus(projectId: number, id: number, status: IssueStatus, now: Date) {
      // Nothing changes while the state is unverified, so calling again is safe.
      const result = await keeper.verified(projectId, now, () => state.setStatus(projectId, id, status, now));
      if (result === 'not_found') throw notFound(id);
      const snap = await state.snapshot(projectId, { ids: [id] });
      await issues.writeFlushed(
        projectId,
        snap.issues.map((i) => i.doc),
        snap.seq,
      );
      return { ok: true as const, status };
    },
  };
}
export type IssuesService = ReturnType<typeof makeIssuesService>;
