/**
 * An issue as Redis keeps it (one hash per issue, apply-events-4.lua) and as MongoDB keeps it (IssueDoc), each
 * read from the other here: the rebuild writes hashes from documents, the flusher and the reads make documents
 * from hashes. And the hours the scripts count in.
 */
import type { IssueStatus } from '../domain/issue-status.ts';
import type { IssueDoc } from '../store/issues.store.ts';

/** Hours of counts an issue keeps (apply-events-4.lua's HOURS_KEPT): the 14-day chart and a day to spare. */
export const HOURS_KEPT = 15 * 24;

export const HOUR_MS = 3_600_000;
/** The number of the hour a time falls in, as the scripts number hours (ms / 3,600,000, rounded down); src/domain/sessions.ts' hourOf gives its start as a Date. */
export const hourIndex = (at: Date) => Math.floor(at.getTime() / HOUR_MS);

/** The document → an issue hash as apply-events-4.lua keeps it (the newest event is the one last seen). */
export function writeIssue(doc: IssueDoc): Record<string, string> {
  const ms = (d: Date | null) => (d ? String(d.getTime()) : '');
  return {
    kind: doc.kind,
    fingerprint: doc.fingerprint,
    title: doc.title,
    culprit: doc.culprit ?? '',
    exception_type: doc.exception_type ?? '',
    level: doc.level,
    status: doc.status,
    first: ms(doc.first_seen),
    last: ms(doc.last_seen),
    count: String(doc.event_count),
    last_release: doc.last_release ?? '',
    regressions: String(doc.regression_count),
    resolves: String(doc.resolved_count),
    resolved_at: ms(doc.resolved_at),
    resolved_release: doc.resolved_release ?? '',
    regressed_at: ms(doc.last_regressed_at),
    regression_kind: doc.last_regression_kind ?? '',
    created: ms(doc.created_at),
    latest: doc.latest_event ?? '',
    latest_at: doc.latest_event ? ms(doc.last_seen) : '',
    policy: doc.policy ?? '',
    first_release: doc.first_release ?? '',
    assignee: doc.assignee ?? '',
    resolved_next: doc.resolved_in_next_release ? '1' : '',
    ignore_count: doc.ignore_until_count == null ? '' : String(doc.ignore_until_count),
    ignore_until: ms(doc.ignore_until ?? null),
    regressed_release: doc.regressed_release ?? '',
  };
}

/** A hash as Redis answers HGETALL inside a script: `[field, value, field, value, ...]`. */
export function fromPairs(fields: string[]): Record<string, string> {
  const h: Record<string, string> = {};
  for (let i = 0; i < fields.length; i += 2) h[fields[i]!] = fields[i + 1]!;
  return h;
}

/**
 * A security issue's entry in its detector group's index (apply-burst-3.lua), from the document: the group and the
 * span [first at, first id, last at, last id]. Its fingerprint, `security:<detector>:<group>:<first attempt>`, names
 * the group; null for an error issue.
 */
export function burstSpan(doc: IssueDoc): { index: string; span: [number, string, number, string] } | null {
  const [kind, detector, group, ...key] = doc.fingerprint.split(':');
  if (doc.kind !== 'security' || kind !== 'security' || !detector || !group || key.length === 0) return null;
  const last = doc.latest_event ? doc.latest_event.slice(doc.latest_event.indexOf(':') + 1) : '~';
  return { index: `${detector}:${group}`, span: [doc.first_seen.getTime(), key.join(':'), doc.last_seen.getTime(), last] };
}

/** An issue hash (apply-events-4.lua) → the document MongoDB keeps. */
export function readIssue(project: number, id: number, h: Record<string, string | undefined>, companies: string[]): IssueDoc {
  const date = (f: string) => (h[f] ? new Date(Number(h[f])) : null);
  return {
    _id: id,
    project_id: project,
    kind: h.kind as IssueDoc['kind'],
    fingerprint: h.fingerprint!,
    title: h.title!,
    culprit: h.culprit ?? '',
    exception_type: h.exception_type || null,
    level: h.level!,
    status: h.status as IssueStatus,
    first_seen: date('first')!,
    last_seen: date('last')!,
    event_count: Number(h.count),
    last_release: h.last_release || null,
    regression_count: Number(h.regressions),
    resolved_count: Number(h.resolves),
    resolved_at: date('resolved_at'),
    resolved_release: h.resolved_release || null,
    last_regressed_at: date('regressed_at'),
    last_regression_kind: (h.regression_kind || null) as IssueDoc['last_regression_kind'],
    companies: companies.sort(),
    created_at: date('created')!,
    latest_event: h.latest || null,
    ...(h.policy ? { policy: h.policy as IssueDoc['policy'] } : {}),
    first_release: h.first_release || null,
    assignee: h.assignee || null,
    resolved_in_next_release: h.resolved_next === '1',
    ignore_until_count: h.ignore_count ? Number(h.ignore_count) : null,
    ignore_until: date('ignore_until'),
    regressed_release: h.regressed_release || null,
  };
}
