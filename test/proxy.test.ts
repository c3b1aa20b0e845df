/**
 * Lookout behind a TLS-terminating reverse proxy (issue 47): TRUST_PROXY
 * names the proxy, whose X-Forwarded-For and X-Forwarded-Proto are believed;
 * from any other peer they are ignored. Requests come from two loopback
 * addresses: 127.0.0.1 is the trusted proxy, 127.0.0.2 a client that reaches
 * Lookout directly.
 */
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import type { TestContext } from './helpers/context.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;

const PASSWORD = 'a long enough password';

/** A sign-in from `from` (a local address) with these headers: its status, body and Set-Cookie. */
function signIn(email: string, password: string, from: string, headers: Record<string, string> = {}) {
  const url = new URL('/api/dashboard/session', ctx.api);
  const body = JSON.stringify({ email, password });
  return new Promise<{ status: number; body: any; cookie: string }>((resolve, reject) => {
    const req = http.request(url, { method: 'POST', localAddress: from, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text), cookie: String(res.headers['set-cookie'] ?? '') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('behind a trusted TLS proxy, COOKIE_SECURE=true', () => {
  withWorkers([], (c) => (ctx = c), { TRUST_PROXY: '127.0.0.1', COOKIE_SECURE: 'true' });

  it('COOKIE_SECURE with X-Forwarded-Proto https from the proxy: 200 and a Secure cookie; plain HTTP is refused with 403, not a 500', async () => {
    const org = await ctx.runtime.admin.createOrg({ name: 'Acme', plan: 'business', seats: 25 });
    await ctx.runtime.accounts.addUser({ org: Number(org.id), email: 'ann@acme.test', role: 'owner', password: PASSWORD });
    const ok = await signIn('ann@acme.test', PASSWORD, '127.0.0.1', { 'x-forwarded-proto': 'https', 'x-forwarded-for': '198.51.100.20' });
    expect(ok.status).toBe(200);
    expect(ok.cookie).toMatch(/lookout_session=[^;]+;.*secure/i);
    // the same headers from a peer that is not the proxy are ignored: plain HTTP, so no Secure cookie is sent
    const direct = await signIn('ann@acme.test', PASSWORD, '127.0.0.2', { 'x-forwarded-proto': 'https' });
    expect([direct.status, direct.body.reason]).toEqual([403, 'tls_required']);
  });
});

describe('behind a trusted proxy', () => {
  withWorkers([], (c) => (ctx = c), { TRUST_PROXY: '127.0.0.1/32, ::1' });

  it('throttles the addresses the proxy names apart, and ignores X-Forwarded-For from anyone else', async () => {
    const org = await ctx.runtime.admin.createOrg({ name: 'Beta', plan: 'business', seats: 25 });
    for (let i = 0; i < 21; i++) await ctx.runtime.accounts.addUser({ org: Number(org.id), email: `u${i}@beta.test`, role: 'member', password: PASSWORD });
    const via = (client: string) => ({ 'x-forwarded-for': `${client}, 127.0.0.1` });
    // twenty failures from one address (on twenty accounts) spend its budget
    for (let i = 0; i < 20; i++) expect((await signIn(`u${i}@beta.test`, 'wrong password!', '127.0.0.1', via('203.0.113.50'))).status).toBe(401);
    expect((await signIn('u20@beta.test', PASSWORD, '127.0.0.1', via('203.0.113.50'))).status).toBe(429);
    // another address behind the same proxy is not locked out
    expect((await signIn('u20@beta.test', PASSWORD, '127.0.0.1', via('203.0.113.51'))).status).toBe(200);
    // a client that reaches Lookout directly cannot claim an address: its own is throttled, whatever it writes
    for (let i = 0; i < 20; i++) await signIn(`u${i}@beta.test`, 'wrong password!', '127.0.0.2', { 'x-forwarded-for': `198.51.100.${i}` });
    const spoofed = await signIn('u20@beta.test', PASSWORD, '127.0.0.2', { 'x-forwarded-for': '198.51.100.99' });
    expect(spoofed.status).toBe(429);
  });
});
