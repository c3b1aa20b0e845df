import { describe, expect, it } from 'vitest';
import { ipv6Prefix64 } from './ip-prefix.ts';

describe('ipv6Prefix64', () => {
  it.each([
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:DB8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:0000:0000:0000:0001', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8::/64'],
    ['2001:db8:0:0:1::', '2001:db8::/64'],
    ['fe80::1%eth0', 'fe80::/64'],
    ['::1', '::/64'],
    ['2001:db8:0:5::7', '2001:db8:0:5::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b::/64'],
    ['::ffff:192.0.2.1', null],
    ['192.0.2.1', null],
    ['not an address', null],
    ['', null],
  ])('%s → %s', (ip, prefix) => {
    expect(ipv6Prefix64(ip)).toBe(prefix);
  });
});
