/** Issues read and status API (spec 4.6–4.8). */
import type { IssueStatus } from '../domain/issue-status.ts';
import { NotFoundError } from '../errors.ts';
import type { EventsStore } from '../store/events.store.ts';
import type { IssueDoc, IssuesStore } from '../store/issues.store.ts';

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

export function makeIssuesService(
  issues: IssuesStore,
  events: EventsStore,
  lockIssue: <T>(id: number, fn: () => Promise<T>) => Promise<T>,
) {
  async function find(projectId: number, id: number): Promise<IssueDoc> {
    const issue = await issues.get(projectId, id);
    if (!issue) throw new NotFoundError('issue_not_found', `no issue ${id} in this project`);
    return issue;
  }
  return {
    async list(projectId: number, q: { status: IssueStatus; order: 'last_seen' | 'id'; limit: number; offset: number }) {
      const { items, total } = await issues.page(projectId, q);
      return { issues: items.map(issueView), total, limit: q.limit, offset: q.offset, order: q.order };
    },
    async get(projectId: number, id: number) {
      const issue = await find(projectId, id);
      const latest = await events.latestForIssue(issue._id);
      return { ...issueView(issue), latest_event: latest?.payload ?? null };
    },
    async setStatus(projectId: number, id: number, status: IssueStatus, now: Date) {
      // The store reads the issue under the lock (for the release at a resolve) and answers null when absent.
      const updated = await lockIssue(id, () => issues.setStatus(projectId, id, status, now));
      if (!updated) throw new NotFoundError('issue_not_found', `no issue ${id} in this project`);
      return { ok: true as const, status };
    },
  };
}
export type IssuesService = ReturnType<typeof makeIssuesService>;
