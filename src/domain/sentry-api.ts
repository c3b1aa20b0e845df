/**
 * The rules of Sentry's web API (`/api/0`) that tools rely on (issue 70), apart from any store: an issue's short id
 * (`SHOP-1F`), the cursor and `Link` header lists page with, Sentry's status words read as Lookout's status changes,
 * and its `statsPeriod`. `docs/api.md` ("Sentry's web API for tools") lists what each tool calls.
 */
import type { IssueStatusBody } from '../generated/schema-types.ts';
import { isId } from './slug.ts';

/**
 * An issue's short id: its project's slug in capitals, a hyphen, and its id in base 36 (Sentry's form, `SHOP-1F`).
 * Issue ids are unique across the installation and never reused, so a short id is stable and names one issue.
 */
export function shortIdOf(projectSlug: string, issueId: number): string {
  return `${projectSlug.toUpperCase()}-${issueId.toString(36).toUpperCase()}`;
}

/** What a path's issue segment names: an id (digits), or a short id's project slug and id; null when neither. */
export function readIssueRef(segment: string): { id: number; projectSlug: string | null } | null {
  if (isId(segment)) return Number.isSafeInteger(Number(segment)) ? { id: Number(segment), projectSlug: null } : null;
  const m = /^([a-z0-9][a-z0-9-]*)-([0-9a-z]{1,11})$/i.exec(segment);
  if (!m) return null;
  const id = parseInt(m[2]!, 36);
  return Number.isSafeInteger(id) && id > 0 ? { id, projectSlug: m[1]!.toLowerCase() } : null;
}

/** A list's place as Sentry's cursor says it (`<value>:<offset>:<is_prev>`); a cursor it cannot read starts over. */
export function readCursor(cursor: string | undefined): number {
  const offset = Number(cursor?.split(':')[1]);
  return Number.isSafeInteger(offset) && offset >= 0 ? offset : 0;
}

/**
 * Sentry's `Link` header for a page at `offset` of `limit` rows: `previous` and `next`, each saying whether it has
 * results (sentry-cli and the MCP server page by `rel="next"` while `results="true"`).
 */
export function linkHeader(url: URL, offset: number, limit: number, more: boolean): string {
  const link = (cursor: string, rel: string, results: boolean) => {
    const to = new URL(url);
    to.searchParams.set('cursor', cursor);
    return `<${to.href}>; rel="${rel}"; results="${results}"; cursor="${cursor}"`;
  };
  return [link(`0:${Math.max(0, offset - limit)}:1`, 'previous', offset > 0), link(`0:${offset + limit}:0`, 'next', more)].join(', ');
}

/** Sentry's issue status words as Lookout's status change; null for a word Lookout has no status for. */
export function statusChangeOf(body: { status?: string; ignoreCount?: number; ignoreDuration?: number }, now: Date): IssueStatusBody | null {
  switch (body.status) {
    case 'resolved':
      return { status: 'resolved' };
    case 'resolvedInNextRelease':
      return { status: 'resolved', in_next_release: true };
    case 'unresolved':
      return { status: 'unresolved' };
    case 'ignored':
    case 'muted': {
      // ignoreDuration is in minutes (Sentry's); ignoreCount a number of events
      const count = typeof body.ignoreCount === 'number' && body.ignoreCount >= 1 ? Math.floor(body.ignoreCount) : undefined;
      const minutes = typeof body.ignoreDuration === 'number' && body.ignoreDuration > 0 ? body.ignoreDuration : undefined;
      return { status: 'ignored', ...(count && { until_count: count }), ...(minutes && { until: new Date(now.getTime() + minutes * 60_000).toISOString() }) };
    }
    default:
      return null;
  }
}

/** Sentry's `statsPeriod` (`24h`, `14d`, `90m`, `2w`) in milliseconds; null when it is not one. */
export function readStatsPeriod(period: string | undefined): number | null {
  const m = /^(\d{1,6})([smhdw])$/.exec(period ?? '');
  if (!m) return null;
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd' | 'w'];
  return Number(m[1]) * unit;
}

/** Sentry's issue `sort` as Lookout's list order (`date`: last seen; `new`: first seen; `freq`: events). */
export function issueOrderOf(sort: string | undefined): 'last_seen' | 'first_seen' | 'event_count' {
  if (sort === 'new') return 'first_seen';
  if (sort === 'freq' || sort === 'user') return 'event_count';
  return 'last_seen';
}
