/** The issue status machine (spec 3.1) as pure decisions. */

export type IssueStatus = 'unresolved' | 'resolved' | 'ignored';
export const ISSUE_STATUSES: readonly IssueStatus[] = ['unresolved', 'resolved', 'ignored'];

export interface StatusFields {
  status: IssueStatus;
  resolved_release: string | null;
}

/**
 * What a new event does to an issue:
 * - resolved → unresolved, counted as a regression; `same_release` when the
 *   event's release equals the release recorded at the resolve;
 * - ignored stays ignored (its counters still move);
 * - unresolved stays unresolved.
 */
export function onNewEvent(
  issue: StatusFields,
  eventRelease: string | null,
): { status: IssueStatus; regression: null | 'same_release' | 'new_release' } {
  if (issue.status !== 'resolved') return { status: issue.status, regression: null };
  const kind = eventRelease !== null && eventRelease === issue.resolved_release ? 'same_release' : 'new_release';
  return { status: 'unresolved', regression: kind };
}
