/**
 * The issue rule (spec 3.1), for error issues and security issues alike: what an occurrence (an error event, or a
 * burst of sign-in attempts received now) and a status change do to an issue. The hot state runs the same rule in
 * Lua (src/state/scripts/lib/issue-rule.lua, used by apply-events-4.lua and apply-burst-3.lua; status changes in
 * set-issue-status-3.lua); test/issue-rule.test.ts feeds random sequences to both and compares.
 *
 * - A resolved issue regresses on an occurrence received after the resolve: `same_release` when it comes in the
 *   release the issue was resolved in, `new_release` otherwise. Resolved "in the next release", it regresses only
 *   on an occurrence of a newer release (by each release's first event); an occurrence with no release (every
 *   sign-in attempt, an event sent without one) regresses it once the project has seen a newer release than the
 *   one it was resolved in, that is once the next release is out (docs/decisions.md).
 * - An ignore that lasts until a count of events, or until a time, ends with the occurrence that reaches it.
 * - An error event adds one to the count; a burst's count is its attempts, and a burst only ever grows, so the
 *   issue keeps the larger.
 */
import type { IssueStatus } from './issue-status.ts';

export type RegressionKind = 'same_release' | 'new_release';

/** The part of an issue the rule reads and writes (times in ms; '' for no release). */
export interface IssueLife {
  status: IssueStatus;
  count: number;
  regressions: number;
  resolves: number;
  resolvedAt: number | null;
  resolvedRelease: string;
  /** resolved in the next release */
  resolvedNext: boolean;
  /** an ignore that ends when the issue reaches this many events */
  ignoreCount: number | null;
  /** an ignore that ends at this time */
  ignoreUntil: number | null;
  regressedAt: number | null;
  regressionKind: RegressionKind | null;
  regressedRelease: string | null;
}

/** An occurrence received at `at`: an error event (adds one) or a burst holding `attempts` attempts. */
export interface Occurrence {
  at: number;
  release: string;
  count: { add: 1 } | { attempts: number };
}

/** The project's releases, each with the time of its first event (ms). */
export type ReleaseFirstSeen = ReadonlyMap<string, number>;

export type IssueChange =
  | { what: 'created' }
  | { what: 'regressed'; n: number; at: number; release: string; regression_kind: RegressionKind }
  | { what: 'unignored'; n: number; at: number; release: string };

export const NEW_ISSUE: IssueLife = {
  status: 'unresolved',
  count: 0,
  regressions: 0,
  resolves: 0,
  resolvedAt: null,
  resolvedRelease: '',
  resolvedNext: false,
  ignoreCount: null,
  ignoreUntil: null,
  regressedAt: null,
  regressionKind: null,
  regressedRelease: null,
};

/** The project's newest release: the one whose first event came last ('' when it has none). */
export function newestRelease(releases: ReleaseFirstSeen): string {
  let newest = '';
  let at = -Infinity;
  for (const [release, first] of releases) {
    if (first > at || (first === at && release > newest)) [newest, at] = [release, first];
  }
  return newest;
}

/** Whether `release` is newer than `than` by first event; no release is newer than none, and any is newer than none. */
export function releaseNewer(releases: ReleaseFirstSeen, release: string, than: string): boolean {
  if (release === '') return false;
  if (than === '') return true;
  const a = releases.get(release);
  const b = releases.get(than);
  return b === undefined || (a !== undefined && a > b);
}

/** What an occurrence does to an issue (`undefined`: not created yet). `releases` already holds the occurrence's. */
export function occur(issue: IssueLife | undefined, o: Occurrence, releases: ReleaseFirstSeen): { issue: IssueLife; changes: IssueChange[] } {
  const changes: IssueChange[] = issue ? [] : [{ what: 'created' }];
  const before = issue ?? NEW_ISSUE;
  const count = 'add' in o.count ? before.count + 1 : Math.max(before.count, o.count.attempts);
  const next: IssueLife = { ...before, count };

  if (before.status === 'resolved' && before.resolvedAt !== null && before.resolvedAt < o.at) {
    const seen = o.release === '' ? newestRelease(releases) : o.release;
    if (!before.resolvedNext || releaseNewer(releases, seen, before.resolvedRelease)) {
      const kind: RegressionKind = o.release !== '' && o.release === before.resolvedRelease ? 'same_release' : 'new_release';
      const n = before.regressions + 1;
      Object.assign(next, { status: 'unresolved', regressions: n, regressedAt: o.at, regressionKind: kind, regressedRelease: o.release, resolvedNext: false });
      changes.push({ what: 'regressed', n, at: o.at, release: o.release, regression_kind: kind });
    }
  } else if (
    before.status === 'ignored' &&
    ((before.ignoreCount !== null && count >= before.ignoreCount) || (before.ignoreUntil !== null && o.at >= before.ignoreUntil))
  ) {
    Object.assign(next, { status: 'unresolved', ignoreCount: null, ignoreUntil: null });
    changes.push({ what: 'unignored', n: count, at: o.at, release: o.release });
  }
  return { issue: next, changes };
}

/** A status set by hand or through the API: how an ignore ends, or a resolve in the next release. */
export type StatusChange =
  | { status: 'unresolved' }
  | { status: 'resolved'; inNextRelease?: boolean }
  | { status: 'ignored'; untilCount?: number; until?: number };

/**
 * A status change at `now`. A resolve records the release it was resolved in: the issue's last release, or with
 * "in the next release" the project's newest now. An ignore "until n more events" ends at the count plus n.
 */
export function setStatus(issue: IssueLife, change: StatusChange, now: number, lastRelease: string, releases: ReleaseFirstSeen): IssueLife {
  const next: IssueLife = { ...issue, status: change.status, resolvedNext: false, ignoreCount: null, ignoreUntil: null };
  if (change.status === 'resolved') {
    next.resolvedNext = change.inNextRelease === true;
    next.resolvedRelease = next.resolvedNext ? newestRelease(releases) : lastRelease;
    next.resolvedAt = now;
    next.resolves = issue.resolves + 1;
  } else if (change.status === 'ignored') {
    if (change.untilCount !== undefined) next.ignoreCount = issue.count + change.untilCount;
    if (change.until !== undefined) next.ignoreUntil = change.until;
  }
  return next;
}
