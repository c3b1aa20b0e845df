/**
 * Outbound safety for webhook targets: only public addresses are reached,
 * unless the operator allows inward ones (WEBHOOK_ALLOW_PRIVATE=true). The
 * check runs when a channel is added and again at every delivery, on the
 * addresses the name resolves to then, and the connection goes to the
 * address that was checked (the request's own `lookup`), so a name that
 * later resolves inward is refused too.
 */
import dns from 'node:dns';
import type { LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';

/**
 * Why an address is not public, as the refusal names it (ipaddr.js' ranges). An IPv6 address that embeds an IPv4
 * one is judged by that address: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96)
 * and 6to4 (2002:AABB:CCDD::/48), so `http://[::127.0.0.1]/` reaches no more than `http://127.0.0.1/` would.
 */
export function inwardRange(address: string): string | null {
  const parsed = ipaddr.parse(address);
  const judged = parsed.kind() === 'ipv6' ? (embeddedIPv4(parsed as ipaddr.IPv6) ?? parsed) : parsed;
  const range = judged.range();
  if (range === 'unicast') return null;
  return INWARD[range] ?? `not public (${range})`;
}

/** The IPv4 address an IPv6 one carries (above), or null. */
export function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = address.parts;
  const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255]);
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && p[5] === 0xffff) return v4(p[6]!, p[7]!); // mapped
  if (zeros(0, 6) && (p[6] !== 0 || p[7]! > 1)) return v4(p[6]!, p[7]!); // compatible (not :: nor ::1)
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return v4(p[6]!, p[7]!); // NAT64
  if (p[0] === 0x2002) return v4(p[1]!, p[2]!); // 6to4
  return null;
}

const INWARD: Record<string, string> = {
  loopback: 'loopback',
  private: 'private',
  uniqueLocal: 'private',
  linkLocal: 'link-local (cloud metadata included)',
  carrierGradeNat: 'private (carrier-grade NAT)',
};

export class TargetRefused extends Error {
  override name = 'TargetRefused';
  constructor(readonly rule: string, message: string) {
    super(message);
  }
}

/** A webhook URL's form: http or https, a host, no credentials in it. */
export function checkUrlForm(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TargetRefused('url', `not a URL: ${text}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TargetRefused('scheme', `only http and https targets are reached, not ${url.protocol}`);
  if (url.username || url.password) throw new TargetRefused('credentials', 'a target URL may not carry a user name or password; use the signature to authenticate');
  return url;
}

/** The addresses a host stands for (an address literal stands for itself). */
async function addressesOf(host: string): Promise<LookupAddress[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(bare)) return [{ address: bare, family: bare.includes(':') ? 6 : 4 }];
  return dns.promises.lookup(bare, { all: true, verbatim: true });
}

/** Throws TargetRefused unless every address of the host is public (or inward targets are allowed). */
export async function checkHost(host: string, allowPrivate: boolean): Promise<LookupAddress[]> {
  let found: LookupAddress[];
  try {
    found = await addressesOf(host);
  } catch (err) {
    throw new TargetRefused('dns', `${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (allowPrivate) return found;
  for (const { address } of found) {
    const range = inwardRange(address);
    if (range) throw new TargetRefused(range.split(' ')[0]!, `${host} resolves to ${address}, a ${range} address; set WEBHOOK_ALLOW_PRIVATE=true to allow inward targets`);
  }
  return found;
}

/**
 * A `lookup` for http.request that answers only checked addresses: the
 * socket connects to what was checked, never to a second resolution.
 */
export function checkedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    checkHost(hostname, allowPrivate).then(
      (found) => (options.all ? callback(null, found) : callback(null, found[0]!.address, found[0]!.family)),
      (err: Error) => callback(err),
    );
  };
}
