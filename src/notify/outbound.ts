/**
 * Outbound safety for webhook targets and OpenID issuers: only public addresses
 * are reached, unless the operator allows inward ones (WEBHOOK_ALLOW_PRIVATE,
 * SSO_ALLOW_PRIVATE). The
 * check runs when a channel is added and again at every delivery, on the
 * addresses the name resolves to then, and the connection goes to the
 * address that was checked (the request's own `lookup`), so a name that
 * later resolves inward is refused too.
 */
import dns from 'node:dns';
import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
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
export async function checkHost(host: string, allowPrivate: boolean, setting = 'WEBHOOK_ALLOW_PRIVATE'): Promise<LookupAddress[]> {
  let found: LookupAddress[];
  try {
    found = await addressesOf(host);
  } catch (err) {
    throw new TargetRefused('dns', `${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (allowPrivate) return found;
  for (const { address } of found) {
    const range = inwardRange(address);
    if (range) throw new TargetRefused(range.split(' ')[0]!, `${host} resolves to ${address}, a ${range} address; set ${setting}=true to allow inward targets`);
  }
  return found;
}

/**
 * A `lookup` for http.request that answers only checked addresses: the
 * socket connects to what was checked, never to a second resolution.
 */
export function checkedLookup(allowPrivate: boolean, setting?: string) {
  return (hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    checkHost(hostname, allowPrivate, setting).then(
      (found) => (options.all ? callback(null, found) : callback(null, found[0]!.address, found[0]!.family)),
      (err: Error) => callback(err),
    );
  };
}

export interface CheckedAnswer {
  status: number;
  /** an https answer's server certificate: when it expires (ms) */
  certificate?: { valid_to: number };
  headers: http.IncomingHttpHeaders;
  /** the answer's first `readBytes` at most */
  body: Buffer<ArrayBuffer>;
  /** the answer was longer: reading stopped there */
  cut: boolean;
}

/**
 * One request to an address a user configured (a webhook, an OpenID issuer): the URL's form and every address of
 * its host checked (`setting` names what allows inward ones), the socket connecting to what was checked, no
 * redirect followed, ended by `signal`, the answer read up to `readBytes`.
 */
export async function checkedRequest(
  target: string,
  opts: {
    method: string;
    headers: Record<string, string | number>;
    body?: string;
    signal: AbortSignal;
    allowPrivate: boolean;
    setting?: string;
    readBytes: number;
    /** an https certificate not verified (an uptime probe of a self-signed site; its expiry is still read) */
    insecureTls?: boolean;
  },
): Promise<CheckedAnswer> {
  const url = checkUrlForm(target);
  // An address literal never reaches `lookup`: it is checked here.
  await checkHost(url.hostname, opts.allowPrivate, opts.setting);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<CheckedAnswer>((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: opts.method,
        headers: opts.headers,
        lookup: checkedLookup(opts.allowPrivate, opts.setting) as never,
        signal: opts.signal,
        agent: false,
        ...(opts.insecureTls ? { rejectUnauthorized: false } : {}),
      },
      (res) => {
        const peer = 'getPeerCertificate' in res.socket ? (res.socket as TLSSocket).getPeerCertificate() : null;
        const certificate = peer?.valid_to ? { valid_to: Date.parse(peer.valid_to) } : undefined;
        const chunks: Buffer[] = [];
        let size = 0;
        let settled = false;
        const finish = (cut: boolean) => {
          if (settled) return;
          settled = true;
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), cut, ...(certificate ? { certificate } : {}) });
        };
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= opts.readBytes) return void chunks.push(chunk);
          res.destroy();
          finish(true);
        });
        res.on('end', () => finish(false));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** The most of an answer `checkedFetch` reads (an OpenID discovery document, keys, tokens). */
const FETCH_READ_BYTES = 1024 * 1024;

/**
 * A fetch for outbound calls to addresses a user configured (an OpenID issuer) through `checkedRequest`: 5 s at
 * most, no redirects followed, an answer over 1 MiB refused.
 */
export function checkedFetch(allowPrivate: boolean, setting: string, timeoutMs = 5000) {
  return async (input: string | URL, init: { method?: string; headers?: HeadersInit; body?: unknown; signal?: AbortSignal | null } = {}): Promise<Response> => {
    const signal = init.signal ? AbortSignal.any([init.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
    const answer = await checkedRequest(String(input), {
      method: init.method ?? 'GET',
      headers: Object.fromEntries(new Headers(init.headers)),
      body: init.body === undefined || init.body === null ? undefined : String(init.body),
      signal,
      allowPrivate,
      setting,
      readBytes: FETCH_READ_BYTES,
    });
    if (answer.cut) throw new TargetRefused('size', `${new URL(String(input)).origin} answered more than ${FETCH_READ_BYTES} bytes`);
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    const status = answer.status || 502;
    return new Response([204, 304].includes(status) ? null : answer.body, { status, headers });
  };
}
