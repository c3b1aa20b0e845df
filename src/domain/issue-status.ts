/** An issue's statuses (spec 3.1); what an event does to them is apply-events-4.lua's. */

export type IssueStatus = 'unresolved' | 'resolved' | 'ignored';
export const ISSUE_STATUSES: readonly IssueStatus[] = ['unresolved', 'resolved', 'ignored'];
