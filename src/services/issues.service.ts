/** Issues read and status API (spec 4.6–4.8). Reads come from MongoDB; a status change goes through Redis. */
import type { IssueStatus } from '../domain/issue-status.ts';
import { NotFoundError, UnavailableError } from '../errors.ts';
import type { StateKeeper } from '../state/rebuild.ts';
import type { IssuesState } from '../state/issues.state.ts';
import type { EventsStore } from '../store/events.store.ts';
import type { IssueDoc, IssuePageQuery, IssuesStore } from '../store/issues.store.ts';

export function issueView(issue: IssueDoc) {
  return {
    id: String(issue._id),
    kind: issue.kind,
    title: issue.title,
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
  };
}

export function makeIssuesService(deps: { issues: IssuesStore; events: EventsStore; state: IssuesState; keeper: StateKeeper }) {
  const { issues, events, state, keeper } = deps;
  const notFound = (id: number) => new NotFoundError('issue_not_found', `no issue ${id} in this project`);
  return {
    async list(projectId: number, q: IssuePageQuery) {
      const { items, total } = await issues.page(projectId, q);
      return { issues: items.map(issueView), total, limit: q.limit, offset: q.offset, order: q.order, ...(q.kind ? { kind: q.kind } : {}) };
    },
    async get(projectId: number, id: number) {
      const issue = await issues.get(projectId, id);
      if (!issue) throw notFound(id);
      const latest = issue.latest_event ? await events.get(issue.latest_event) : null;
      return { ...issueView(issue), latest_event: latest ? (JSON.parse(latest.payload) as unknown) : null };
    },
    /** Sets the status in Redis, then writes the issue to MongoDB before answering, so the next read sees it. */
    async setStatus(projectId: number, id: number, status: IssueStatus, now: Date) {
      let result = await state.setStatus(projectId, id, status, now);
      if (result === 'unverified') {
        await keeper.verify(projectId, now);
        result = await state.setStatus(projectId, id, status, now);
      }
      if (result === 'not_found') throw notFound(id);
      // Redis restarted again between the verification and the change: nothing was changed, so a retry is safe.
      if (result === 'unverified') throw new UnavailableError('state_rebuilding', 'the project state is being rebuilt after a Redis restart; retry in a moment');
      const snap = await state.snapshot(projectId, [id]);
      await issues.writeFlushed(projectId, snap.issues.map((i) => i.doc), snap.seq);
      return { ok: true as const, status };
    },
  };
}
export type IssuesService = ReturnType<typeof makeIssuesService>;
