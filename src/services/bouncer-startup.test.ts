/**
 * A decision written for a bouncer's list from the decision itself and from its member of the `dw` set
 * (apply-burst-3.lua writes `<id>|<kind>|<type>|<i or a>|<value>`) is the same JSON, and reads as CrowdSec's shape.
 */
import { describe, expect, it } from 'vitest';
import type { Decision } from '../state/decisions.state.ts';
import { written, writtenMember } from './bouncer-startup.ts';
import { goDuration } from './bouncers.service.ts';

const until = Date.UTC(2026, 10, 26, 23, 0, 0, 250);
const base = { type: 'ban' as const, escalation: 0, issue_id: '7', created_at: until - 3600_000, until };

describe('a decision as a bouncer reads it', () => {
  it.each<[Decision, string, object]>([
    [{ ...base, id: 'd12', kind: 'brute_force', actor: 'admin', ip: '203.0.113.7' }, 'd12|brute_force|ban|i|203.0.113.7', { scope: 'Ip', value: '203.0.113.7' }],
    [
      { ...base, id: 'd13', kind: 'credential_stuffing', type: 'captcha', actor: null, ip: '2001:db8:1:2::/64' },
      'd13|credential_stuffing|captcha|i|2001:db8:1:2::/64',
      { scope: 'Range', value: '2001:db8:1:2::/64', type: 'captcha', scenario: 'lookout/credential-stuffing' },
    ],
    [{ ...base, id: 'd14', kind: 'brute_force', actor: 'ro"ot|x', ip: null }, 'd14|brute_force|ban|a|ro"ot|x', { scope: 'username', value: 'ro"ot|x' }],
  ])('%j', (decision, member, shape) => {
    const a = written(decision);
    const b = writtenMember(member, until)!;
    expect(b.head + b.tail).toBe(a.head + a.tail);
    const json = JSON.parse(`${a.head}${goDuration(3_600_000)}${a.tail}`);
    expect(json).toEqual({
      id: Number(decision.id.slice(1)),
      origin: 'lookout',
      scenario: 'lookout/brute-force',
      type: 'ban',
      duration: '1h0m0s',
      until: new Date(until).toISOString(),
      ...shape,
    });
  });

  it('reads no member of another form', () => {
    for (const member of ['', 'd1', 'd1|brute_force|ban|i', 'd1|other|ban|i|1.2.3.4', 'd1|brute_force|block|i|1.2.3.4']) expect(writtenMember(member, until)).toBeNull();
  });
});
