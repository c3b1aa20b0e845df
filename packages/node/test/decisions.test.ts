/**
 * The SDK's copy of the decisions feed, a pure table: which sign-ins a decision in force names, by address, by
 * actor for brute force, and by range for credential stuffing spread over an IPv6 /64.
 */
import { describe, expect, it } from 'vitest';
import { makeDecisionCopy, type Decision } from '../src/decisions.ts';

const until = new Date(Date.now() + 3600_000).toISOString();
const decision = (d: Partial<Decision> & Pick<Decision, 'id' | 'kind' | 'ip'>): Decision => ({
  type: 'ban',
  escalation: 0,
  issue_id: '1',
  created_at: new Date().toISOString(),
  until,
  ...d,
});

describe('makeDecisionCopy', () => {
  const copy = makeDecisionCopy();
  copy.apply({
    decisions: [
      decision({ id: 'd1', kind: 'brute_force', actor: 'admin', ip: '203.0.113.7' }),
      decision({ id: 'd2', kind: 'credential_stuffing', ip: '198.51.100.9' }),
      decision({ id: 'd3', kind: 'credential_stuffing', ip: '2001:db8:1:2::/64' }),
    ],
    removed: [],
    cursor: '1-0',
  });
  it.each([
    [{ actor: 'admin', ip: '203.0.113.7' }, true],
    [{ actor: 'alice', ip: '203.0.113.7' }, false],
    [{ actor: 'anyone', ip: '198.51.100.9' }, true],
    [{ actor: 'anyone', ip: '2001:db8:1:2::abcd' }, true],
    [{ actor: 'anyone', ip: '2001:db8:1:3::1' }, false],
    [{ actor: 'anyone', ip: null }, false],
    [{ actor: 'anyone', ip: 'not an address' }, false],
  ])('%j → %s', (who, blocked) => {
    expect(copy.isBlocked(who)).toBe(blocked);
  });

  it('forgets a range once it is removed', () => {
    copy.apply({ decisions: [], removed: ['d3'], cursor: '2-0' });
    expect(copy.isBlocked({ ip: '2001:db8:1:2::abcd' })).toBe(false);
  });
});
