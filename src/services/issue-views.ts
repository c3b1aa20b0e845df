/** Issues, their events, attachments and activity as the API shows them (src/services/issues.service.ts). */
import { renderMarkdown } from '../domain/markdown.ts';
import type { ActivityDoc } from '../store/activity.store.ts';
import type { AttachmentInfo } from '../store/attachments.store.ts';
import type { StoredAttempt } from '../store/attempts.store.ts';
import { payloadOf, type EventDoc } from '../store/events.store.ts';
import type { IssueDoc } from '../store/issues.store.ts';

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
    first_release: issue.first_release ?? null,
    assignee: issue.assignee ?? null,
    regressed: isRegressed(issue),
    resolved_in_next_release: issue.status === 'resolved' && issue.resolved_in_next_release === true,
    resolved_release: issue.resolved_release,
    ignore_until: issue.status === 'ignored' ? (issue.ignore_until?.toISOString() ?? null) : null,
    ignore_until_count: issue.status === 'ignored' ? (issue.ignore_until_count ?? null) : null,
  };
}

/** Unresolved, and regressed since it was last resolved (snapshot-issues-3.lua's fx:regressed holds the same issues). */
export function isRegressed(issue: IssueDoc): boolean {
  const regressed = issue.last_regressed_at?.getTime();
  return issue.status === 'unresolved' && regressed !== undefined && regressed > (issue.resolved_at?.getTime() ?? 0);
}

/** A row of a security issue's attempts: when, what, who, from where, with what. */
export function attemptSummary(a: StoredAttempt) {
  const { security } = a.body;
  return {
    event_id: a.event_id,
    timestamp: a.at.toISOString(),
    received_at: a.received_at.toISOString(),
    kind: a.security_kind,
    // what the installation said of it (spec 2.6: `wrong password`), else what its kind says
    outcome: security.outcome ?? (a.security_kind === 'login_succeeded' ? 'succeeded' : 'failed'),
    actor: a.actor,
    ip: a.ip,
    user_agent: security.user_agent ?? null,
  };
}

/** What a page of an issue's events shows of each: enough to pick one, not its whole payload. */
export function eventSummary(doc: EventDoc) {
  const p = payloadOf(doc);
  const user = p.user as Record<string, unknown> | undefined;
  return {
    event_id: doc.event_id,
    timestamp: doc.at.toISOString(),
    received_at: doc.received_at.toISOString(),
    release: doc.release,
    environment: doc.environment ?? (p.environment as string | undefined) ?? null,
    level: (p.level as string | undefined) ?? null,
    message: messageOf(p),
    user: user ? { id: user.id ?? null, email: user.email ?? null, username: user.username ?? null } : null,
    tags: (p.tags as Record<string, string> | undefined) ?? {},
  };
}

/** An event's message: its own, its log entry's, or its exception's type and value. */
export function messageOf(p: Record<string, unknown>): string | null {
  if (typeof p.message === 'string' && p.message) return p.message;
  const entry = p.logentry as { formatted?: unknown; message?: unknown } | undefined;
  if (typeof entry?.formatted === 'string' && entry.formatted) return entry.formatted;
  if (typeof entry?.message === 'string' && entry.message) return entry.message;
  const values = (p.exception as { values?: { type?: unknown; value?: unknown }[] } | undefined)?.values ?? [];
  const main = values[values.length - 1];
  if (!main) return null;
  return [main.type, main.value].filter((v) => typeof v === 'string' && v).join(': ') || null;
}

/** What an event shows of an attachment: enough to pick it, and whether its bytes were kept. */
export function attachmentView(a: AttachmentInfo) {
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

/** An activity entry as the issue page shows it: a comment's Markdown also as HTML safe to show. */
export function activityView(a: ActivityDoc) {
  return {
    id: a._id.slice(a._id.lastIndexOf(':') + 1),
    at: a.at.toISOString(),
    kind: a.kind,
    by: a.by ?? null,
    data: a.kind === 'comment' ? { ...a.data, html: renderMarkdown(String(a.data.text)) } : a.data,
  };
}
