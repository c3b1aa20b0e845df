/** An issue's statuses (spec 3.1); what an occurrence and a status change do to them is ./issue-lifecycle.ts'. */

export type IssueStatus = 'unresolved' | 'resolved' | 'ignored';
export const ISSUE_STATUSES: readonly IssueStatus[] = ['unresolved', 'resolved', 'ignored'];
