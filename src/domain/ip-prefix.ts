/**
 * The IPv6 /64 an address belongs to (issue 49): a /64 is what one site or host is given, and an attacker who
 * rotates through it evades a detector that counts per address, so credential stuffing is counted per /64 as well.
 */
import net from 'node:net';

/** Eight 16-bit groups of an IPv6 address, or null for anything else (an IPv4-mapped address is IPv4). */
function groupsOf(ip: string): number[] | null {
  const address = ip.split('%')[0]!.toLowerCase();
  if (net.isIP(address) !== 6) return null;
  const halves = address.split('::');
  const parts = (half: string | undefined) => {
    if (!half) return [];
    const out: number[] = [];
    for (const part of half.split(':')) {
      if (!part.includes('.')) out.push(parseInt(part, 16));
      else {
        const [a, b, c, d] = part.split('.').map(Number) as [number, number, number, number];
        out.push((a << 8) | b, (c << 8) | d);
      }
    }
    return out;
  };
  const head = parts(halves[0]);
  const tail = parts(halves[1]);
  const groups = halves.length === 2 ? [...head, ...Array<number>(8 - head.length - tail.length).fill(0), ...tail] : head;
  // ::ffff:a.b.c.d carries an IPv4 address
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) return null;
  return groups;
}

/** The groups written as RFC 5952 writes them: lower case, the longest run of two or more zero groups as `::`. */
function written(groups: number[]): string {
  let best = { at: -1, length: 1 };
  for (let i = 0; i < groups.length; ) {
    let j = i;
    while (j < groups.length && groups[j] === 0) j++;
    if (j - i > best.length) best = { at: i, length: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.at < 0) return hex.join(':');
  return `${hex.slice(0, best.at).join(':')}::${hex.slice(best.at + best.length).join(':')}`;
}

/** `2001:db8:1:2::/64` for any address in that /64; null for an IPv4 address or anything that is no address. */
export function ipv6Prefix64(ip: string): string | null {
  const groups = groupsOf(ip);
  return groups ? `${written([...groups.slice(0, 4), 0, 0, 0, 0])}/64` : null;
}

/** Whether a decision's value names a range (`<address>/<bits>`) rather than one address. */
export const isRange = (value: string): boolean => value.includes('/');

/** The family of an address, as net.BlockList names it. */
export const familyOf = (ip: string): 'ipv4' | 'ipv6' => (net.isIP(ip) === 6 ? 'ipv6' : 'ipv4');

/** A range written `<address>/<bits>` (`192.0.2.0/24`, `2001:db8::/48`) read; null when it is none. */
export function subnetOf(range: string): { address: string; bits: number; family: 'ipv4' | 'ipv6' } | null {
  const [address = '', bits, ...rest] = range.split('/');
  const version = net.isIP(address);
  if (!version || bits === undefined || rest.length > 0 || !/^\d{1,3}$/.test(bits) || Number(bits) > (version === 4 ? 32 : 128)) return null;
  return { address, bits: Number(bits), family: familyOf(address) };
}
