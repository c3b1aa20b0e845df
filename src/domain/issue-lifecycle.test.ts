import { describe, expect, it } from 'vitest';
import { NEW_ISSUE, newestRelease, occur, releaseNewer, setStatus, type IssueLife, type Occurrence } from './issue-lifecycle.ts';

const releases = new Map([
  ['1.0', 1000],
  ['1.1', 2000],
]);
const event = (at: number, release = ''): Occurrence => ({ at, release, count: { add: 1 } });
const resolved = (over: Partial<IssueLife> = {}): IssueLife => ({ ...NEW_ISSUE, count: 3, status: 'resolved', resolvedAt: 5000, resolvedRelease: '1.0', resolves: 1, ...over });

describe('occur', () => {
  it.each([
    ['a first event creates the issue', undefined, event(1), 'unresolved', ['created']],
    ['an event on an unresolved issue only counts', { ...NEW_ISSUE, count: 1 }, event(1), 'unresolved', []],
    ['resolved, an event received after: regressed', resolved(), event(6000, '1.1'), 'unresolved', ['regressed']],
    ['resolved, an event received in the same ms: still resolved', resolved(), event(5000, '1.1'), 'resolved', []],
    ['next release, an event of the same release: still resolved', resolved({ resolvedNext: true }), event(6000, '1.0'), 'resolved', []],
    ['next release, an event of a newer release: regressed', resolved({ resolvedNext: true }), event(6000, '1.1'), 'unresolved', ['regressed']],
    ['next release, no release, a newer one out: regressed', resolved({ resolvedNext: true }), event(6000), 'unresolved', ['regressed']],
    ['next release, no release, none newer: still resolved', resolved({ resolvedNext: true, resolvedRelease: '1.1' }), event(6000), 'resolved', []],
    ['ignored for good: stays ignored', { ...NEW_ISSUE, status: 'ignored' as const }, event(1), 'ignored', []],
    ['ignored until 4 events, the 4th: unignored', { ...NEW_ISSUE, count: 3, status: 'ignored' as const, ignoreCount: 4 }, event(1), 'unresolved', ['unignored']],
    ['ignored until 5 events, the 4th: ignored', { ...NEW_ISSUE, count: 3, status: 'ignored' as const, ignoreCount: 5 }, event(1), 'ignored', []],
    ['ignored until a time, reached: unignored', { ...NEW_ISSUE, status: 'ignored' as const, ignoreUntil: 100 }, event(100), 'unresolved', ['unignored']],
    ['a burst keeps the larger count', { ...NEW_ISSUE, count: 9, status: 'ignored' as const, ignoreCount: 10 }, { at: 1, release: '', count: { attempts: 7 } }, 'ignored', []],
  ] as const)('%s', (_, issue, o, status, changes) => {
    const next = occur(issue, o, releases);
    expect(next.issue.status).toBe(status);
    expect(next.changes.map((c) => c.what)).toEqual(changes);
  });

  it('names the regression by release', () => {
    expect(occur(resolved(), event(6000, '1.0'), releases).changes).toEqual([{ what: 'regressed', n: 1, at: 6000, release: '1.0', regression_kind: 'same_release' }]);
    expect(occur(resolved(), event(6000), releases).changes).toEqual([{ what: 'regressed', n: 1, at: 6000, release: '', regression_kind: 'new_release' }]);
  });
});

describe('releases', () => {
  it('orders releases by first event; none is newer than none, any newer than none', () => {
    expect(newestRelease(releases)).toBe('1.1');
    expect(newestRelease(new Map())).toBe('');
    expect(releaseNewer(releases, '1.1', '1.0')).toBe(true);
    expect(releaseNewer(releases, '1.0', '1.1')).toBe(false);
    expect(releaseNewer(releases, '', '')).toBe(false);
    expect(releaseNewer(releases, '1.0', '')).toBe(true);
    expect(releaseNewer(releases, '1.0', 'gone')).toBe(true);
  });
});

describe('setStatus', () => {
  it('a resolve in the next release records the newest release; an ignore until more events counts from now', () => {
    expect(setStatus({ ...NEW_ISSUE, count: 2 }, { status: 'resolved', inNextRelease: true }, 10, '1.0', releases)).toMatchObject({ resolvedRelease: '1.1', resolvedNext: true, resolves: 1 });
    expect(setStatus({ ...NEW_ISSUE, count: 2 }, { status: 'resolved' }, 10, '1.0', releases)).toMatchObject({ resolvedRelease: '1.0', resolvedNext: false });
    expect(setStatus({ ...NEW_ISSUE, count: 2 }, { status: 'ignored', untilCount: 3 }, 10, '', releases)).toMatchObject({ ignoreCount: 5, ignoreUntil: null });
  });
});
