import { describe, expect, it } from 'vitest';
import { makeAllowlist } from './allowlist.ts';

describe('makeAllowlist', () => {
  const list = makeAllowlist(['192.0.2.10', '198.51.100.0/24', '2001:db8::/48', 'Ops@Acme.example', ' monitor-bot ']);
  it.each([
    [{ actor: null, ip: '192.0.2.10' }, true],
    [{ actor: null, ip: '192.0.2.11' }, false],
    [{ actor: null, ip: '198.51.100.250' }, true],
    [{ actor: null, ip: '198.51.101.1' }, false],
    [{ actor: null, ip: '2001:db8:0:ffff::1' }, true],
    [{ actor: null, ip: '2001:db8:1::1' }, false],
    [{ actor: 'ops@acme.example', ip: '203.0.113.1' }, true],
    [{ actor: 'monitor-bot', ip: null }, true],
    [{ actor: 'admin', ip: null }, false],
    [{ actor: '192.0.2.10', ip: '203.0.113.1' }, false],
    [{ actor: null, ip: 'not an address' }, false],
  ])('%j → %s', (who, allowed) => {
    expect(list.allows(who)).toBe(allowed);
  });
});
