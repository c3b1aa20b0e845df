import { describe, expect, it } from 'vitest';
import { onNewEvent } from './issue-status.ts';

describe('onNewEvent', () => {
  it.each([
    { from: 'unresolved', resolved: null, release: '1.0', status: 'unresolved', regression: null },
    { from: 'ignored', resolved: null, release: '1.0', status: 'ignored', regression: null },
    { from: 'resolved', resolved: '1.0', release: '1.0', status: 'unresolved', regression: 'same_release' },
    { from: 'resolved', resolved: '1.0', release: '1.1', status: 'unresolved', regression: 'new_release' },
    { from: 'resolved', resolved: null, release: '1.1', status: 'unresolved', regression: 'new_release' },
    { from: 'resolved', resolved: null, release: null, status: 'unresolved', regression: 'new_release' },
    { from: 'resolved', resolved: '1.0', release: null, status: 'unresolved', regression: 'new_release' },
  ] as const)('$from (resolved in $resolved) + event of $release → $status, $regression', ({ from, resolved, release, status, regression }) => {
    expect(onNewEvent({ status: from, resolved_release: resolved }, release)).toEqual({ status, regression });
  });
});
