/**
 * Behind a reverse proxy (TRUST_PROXY): only a peer in the list may say who
 * the client is (`X-Forwarded-For`) and whether it came over TLS
 * (`X-Forwarded-Proto`). From any other peer those headers are removed before
 * anything reads them, so a client cannot claim another address to dodge the
 * sign-in throttle, nor the protocol. The client is the right-most address of
 * the chain that is not a trusted proxy: the left-most is what the client
 * itself wrote.
 */
import ipaddr from 'ipaddr.js';
import type { Middleware } from 'koa';
import type { AppState } from '../state.ts';

const FORWARDED = ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'forwarded'];

/** Whether an address is one of the trusted proxies (an address, or in a CIDR range). */
export function makeTrust(entries: readonly string[]): (address: string) => boolean {
  // an address is the range of itself alone
  const ranges = entries.map((e) => {
    if (e.includes('/')) return ipaddr.parseCIDR(e);
    const addr = ipaddr.process(e);
    return [addr, addr.kind() === 'ipv4' ? 32 : 128] as const;
  });
  return (address) => {
    if (!ipaddr.isValid(address)) return false;
    const addr = ipaddr.process(address);
    return ranges.some(([base, bits]) => base.kind() === addr.kind() && addr.match(base, bits));
  };
}

export function proxyMiddleware(trusted: readonly string[]): Middleware<AppState> {
  const isTrusted = makeTrust(trusted);
  return async (ctx, next) => {
    const peer = ctx.req.socket.remoteAddress ?? '';
    if (!isTrusted(peer)) {
      for (const header of FORWARDED) delete ctx.req.headers[header];
    } else {
      const chain = (ctx.get('x-forwarded-for') || '').split(',').map((a) => a.trim()).filter(Boolean);
      let client = peer;
      for (let i = chain.length - 1; i >= 0 && isTrusted(client); i--) client = chain[i]!;
      ctx.request.ip = ipaddr.isValid(client) ? ipaddr.process(client).toString() : peer;
    }
    await next();
  };
}
