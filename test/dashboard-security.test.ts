/**
 * The dashboard's guards over HTTP, against the real API and stores: no
 * session → the sign-in page or 401; a wrong CSRF token → 403; a member → 403
 * on owner actions (and allowed the rest); another organisation's project →
 * 404 on every route; and no password or secret key in the logs or stores.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, everythingStored, sessionCookie, startTestContext, type TestContext } from './helpers/context.ts';

const OWNER = { email: 'owner@one.example', password: 'owner password one' };
const MEMBER = { email: 'member@one.example', password: 'member password one' };
const OTHER = { email: 'owner@two.example', password: 'owner password two' };

let ctx: TestContext;
let logged = '';
let mine: { id: string; secret_key: string };
let theirs: { id: string; secret_key: string };

beforeAll(async () => {
  // Every log line of this API, at debug level, is kept to be searched for secrets.
  const sink = new Writable({ write: (chunk, _enc, done) => ((logged += String(chunk)), done()) });
  ctx = await startTestContext({ LOG_LEVEL: 'debug' }, { logTo: sink });
  const { runtime } = ctx;
  const one = Number((await runtime.admin.createOrg({ name: 'One', plan: 'business', seats: null })).id);
  const two = Number((await runtime.admin.createOrg({ name: 'Two', plan: 'business', seats: null })).id);
  await runtime.accounts.addUser({ org: one, ...OWNER, role: 'owner' });
  await runtime.accounts.addUser({ org: one, ...MEMBER, role: 'member' });
  await runtime.accounts.addUser({ org: two, ...OTHER, role: 'owner' });
  mine = await runtime.admin.createProject({ org: one, name: 'mine', securityMonitoring: true });
  theirs = await runtime.admin.createProject({ org: two, name: 'theirs', securityMonitoring: true });
}, 60_000);
afterAll(async () => {
  await ctx?.close();
});

/** Signs in; the cookie and the CSRF token for the calls that follow. */
async function signIn(user: { email: string; password: string }) {
  const res = await call(ctx, 'POST', '/api/dashboard/session', { body: user });
  expect(res.status).toBe(200);
  const cookie = sessionCookie(res);
  return {
    call: (method: string, path: string, body?: unknown, csrf: string = res.body.csrf_token) =>
      call(ctx, method, `/api/dashboard${path}`, { body, headers: { cookie, ...(method === 'GET' ? {} : { 'x-csrf-token': csrf }) } }),
    page: (path: string) => fetch(`${ctx.api}${path}`, { headers: { cookie }, redirect: 'manual' }),
  };
}

describe('dashboard guards', () => {
  it('sends a visitor without a session to the sign-in page, and answers its API with 401', async () => {
    for (const path of ['/', '/projects', `/projects/${mine.id}/issues?status=resolved`, '/organisation']) {
      const res = await fetch(`${ctx.api}${path}`, { redirect: 'manual' });
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe(`/sign-in?next=${encodeURIComponent(path)}`);
    }
    const signInPage = await fetch(`${ctx.api}/sign-in`);
    expect(signInPage.status).toBe(200);
    expect(signInPage.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await signInPage.text()).toContain('<div id="app">');
    for (const [method, path] of [['GET', '/projects'], ['GET', `/projects/${mine.id}`], ['POST', '/projects'], ['GET', '/org']]) {
      const res = await call(ctx, method!, `/api/dashboard${path}`, { body: method === 'POST' ? { name: 'x' } : undefined });
      expect(res.status).toBe(401);
      expect(res.body.reason).toBe('not_signed_in');
    }
  });

  it('serves the pages to a signed-in user, and the assets with long caching', async () => {
    const owner = await signIn(OWNER);
    const page = await owner.page(`/projects/${mine.id}/releases`);
    expect(page.status).toBe(200);
    // a release page opened by its address, whatever its name holds (dots, '+', and '#', '/' or spaces encoded)
    for (const release of ['erp@17.0.4', 'erp@17.0.4+build.7', 'web#2', 'app/1.0', 'shop 2.1']) {
      const opened = await owner.page(`/projects/${mine.id}/releases/${encodeURIComponent(release)}?environment=production`);
      expect(opened.status, release).toBe(200);
      expect(opened.headers.get('content-type'), release).toMatch(/text\/html/);
    }
    const html = await page.text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(`${ctx.api}${script}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    const missing = await call(ctx, 'GET', '/assets/nothing-here.js');
    expect(missing.status).toBe(404);
  });

  it('refuses a state-changing request without the right CSRF token', async () => {
    const owner = await signIn(OWNER);
    for (const csrf of ['', 'wrong-token']) {
      const res = await owner.call('PATCH', `/projects/${mine.id}`, { enabled: false }, csrf);
      expect(res.status).toBe(403);
      expect(res.body.reason).toBe('csrf_mismatch');
    }
    expect((await ctx.runtime.admin.showProject(Number(mine.id))).enabled).toBe(true);
  });

  it('refuses a member the owner actions, and allows the rest', async () => {
    const member = await signIn(MEMBER);
    const ownerActions: [string, string, unknown?][] = [
      ['POST', '/projects', { name: 'new' }],
      ['PATCH', `/projects/${mine.id}`, { enabled: false }],
      ['POST', `/projects/${mine.id}/keys`, { kind: 'secret' }],
      ['POST', `/projects/${mine.id}/unbind`],
      ['PATCH', '/org', { plan: 'free' }],
      ['POST', '/org/people', { list: 'invites', email: 'x@one.example' }],
      ['DELETE', `/org/people/members/${encodeURIComponent(OWNER.email)}`],
      ['POST', `/projects/${mine.id}/bouncers`, { name: 'edge' }],
      ['DELETE', `/projects/${mine.id}/bouncers/whatever`],
    ];
    for (const [method, path, body] of ownerActions) {
      const res = await member.call(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.reason).toBe('owner_required');
    }
    expect((await member.call('GET', '/projects')).body.projects.map((p: { id: string }) => p.id)).toEqual([mine.id]);
    expect((await member.call('GET', '/org')).status).toBe(200);
    expect((await member.call('GET', `/projects/${mine.id}/bouncers`)).body).toEqual({ bouncers: [] });
    expect((await member.call('PUT', `/projects/${mine.id}/alerts`, { threshold: 7 })).status).toBe(200);
    const org = await ctx.runtime.admin.showOrg(Number((await ctx.runtime.admin.showProject(Number(mine.id))).org));
    expect(org.plan).toBe('business');
    expect(org.members).toContain(OWNER.email);
  });

  it("answers 404 for another organisation's project, on every route", async () => {
    const owner = await signIn(OWNER);
    const routes: [string, string, unknown?][] = [
      ['GET', ''],
      ['PATCH', '', { enabled: false }],
      ['POST', '/keys', { kind: 'secret' }],
      ['POST', '/unbind'],
      ['PUT', '/alerts', { threshold: 2 }],
      ['POST', '/alerts/preview', { threshold: 2 }],
      ['GET', '/releases'],
      ['GET', '/releases/1.0.0'],
      ['GET', '/issues'],
      ['GET', '/issues/1'],
      ['POST', '/issues/1/status', { status: 'resolved' }],
      ['GET', '/issues/1/decisions'],
      ['GET', '/bouncers'],
      ['POST', '/bouncers', { name: 'edge' }],
    ];
    for (const [method, suffix, body] of routes) {
      for (const id of [theirs.id, '999999']) {
        const res = await owner.call(method, `/projects/${id}${suffix}`, body);
        expect(res.status, `${method} /projects/${id}${suffix}`).toBe(404);
        expect(res.body.reason).toBe('project_not_found');
      }
    }
    const untouched = await ctx.runtime.admin.showProject(Number(theirs.id));
    expect(untouched.enabled).toBe(true);
    expect(untouched.alerts.threshold).toBe(5);
  });

  it('answers bad input with a 400 that names the field', async () => {
    const owner = await signIn(OWNER);
    const alerts = await owner.call('PUT', `/projects/${mine.id}/alerts`, { threshold: 0, window_seconds: 'soon' });
    expect(alerts.status).toBe(400);
    expect(alerts.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['/threshold', '/window_seconds']);
    expect((await owner.call('GET', `/projects/${mine.id}/releases/1.0.0?range=1y`)).body.reason).toBe('invalid_query');
    expect((await owner.call('GET', `/projects/${mine.id}/issues?kind=warning`)).status).toBe(400);
    expect((await owner.call('POST', '/org/people', { list: 'admins', email: 'a@b.c' })).status).toBe(400);
  });

  it('throttles sign-in after repeated failures', async () => {
    let last = 0;
    for (let i = 0; i < 6; i++) last = (await call(ctx, 'POST', '/api/dashboard/session', { body: { email: OTHER.email, password: 'wrong' } })).status;
    expect(last).toBe(429);
    expect((await call(ctx, 'POST', '/api/dashboard/session', { body: OTHER })).status).toBe(429);
  });

  it('keeps no password or secret key in the logs or the stores', async () => {
    const owner = await signIn(OWNER);
    const rotated = (await owner.call('POST', `/projects/${mine.id}/keys`, { kind: 'secret' })).body.secret_key as string;
    const created = (await owner.call('POST', '/projects', { name: 'another' })).body.secret_key as string;
    const bouncer = (await owner.call('POST', `/projects/${mine.id}/bouncers`, { name: 'edge-nginx' })).body.key as string;
    expect(rotated).toMatch(/^lk_sk_/);
    expect(bouncer).toMatch(/^lkb_/);
    const secrets = [OWNER.password, MEMBER.password, OTHER.password, mine.secret_key, theirs.secret_key, rotated, created, bouncer];
    let stored = await everythingStored(ctx);
    const redis = ctx.runtime.queues.connection;
    for (const key of await redis.keys(`${ctx.config.queuePrefix}*`)) {
      const type = await redis.type(key);
      if (type === 'string') stored += await redis.get(key);
      if (type === 'hash') stored += JSON.stringify(await redis.hgetall(key));
    }
    expect(logged).toContain('/api/dashboard/session');
    for (const secret of secrets) {
      expect(stored).not.toContain(secret);
      expect(logged).not.toContain(secret);
    }
  });
});
