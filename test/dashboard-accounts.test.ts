/**
 * Dashboard accounts against the real API and stores: users made with the
 * admin CLI, sign-in with an HttpOnly session cookie, CSRF on every
 * state-changing request, server-side sign-out, throttling, one-time
 * set-password links, and no password anywhere in the stores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, sessionCookie, startTestContext, type TestContext } from './helpers/context.ts';
import { runCli } from './helpers/process.ts';

let ctx: TestContext;
let org: string;
beforeAll(async () => {
  ctx = await startTestContext();
  org = (await ctx.runtime.admin.createOrg({ name: 'Acme', plan: 'business', seats: null })).id;
});
afterAll(async () => {
  await ctx?.close();
});

const PASSWORD = 'correct horse battery staple';
const signIn = (email: string, password: string) => call(ctx, 'POST', '/api/dashboard/session', { body: { email, password } });

async function addUser(email: string, role: 'owner' | 'member', password?: string) {
  const args = ['admin', 'user', 'add', '--org', org, '--email', email, '--role', role, ...(password ? ['--password-stdin'] : [])];
  const res = await runCli(args, ctx.env, password ? `${password}\n` : undefined);
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout);
}

describe('dashboard accounts', () => {
  it('signs in with an HttpOnly, SameSite=Lax cookie, needs the CSRF token to sign out, and ends the session server-side', async () => {
    expect(await addUser('Owner@Acme.test', 'owner', PASSWORD)).toEqual({ email: 'owner@acme.test', org, role: 'owner' });
    const res = await signIn('owner@acme.test', PASSWORD);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ email: 'owner@acme.test', org, role: 'owner', csrf_token: expect.any(String), setup_2fa: false });
    const setCookie = res.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/httponly/i);
    expect(setCookie).toMatch(/samesite=lax/i);
    expect(setCookie).not.toMatch(/secure/i);
    const cookie = sessionCookie(res);

    expect((await call(ctx, 'GET', '/api/dashboard/session')).body.reason).toBe('not_signed_in');
    expect((await call(ctx, 'GET', '/api/dashboard/session', { headers: { cookie } })).body.role).toBe('owner');

    const noToken = await call(ctx, 'DELETE', '/api/dashboard/session', { headers: { cookie } });
    expect([noToken.status, noToken.body.reason]).toEqual([403, 'csrf_mismatch']);
    const wrongToken = await call(ctx, 'DELETE', '/api/dashboard/session', { headers: { cookie, 'x-csrf-token': 'x'.repeat(43) } });
    expect(wrongToken.status).toBe(403);
    const out = await call(ctx, 'DELETE', '/api/dashboard/session', { headers: { cookie, 'x-csrf-token': res.body.csrf_token } });
    expect(out.status).toBe(204);
    expect((await call(ctx, 'GET', '/api/dashboard/session', { headers: { cookie } })).status).toBe(401);
  });

  it('throttles an account after repeated failures, even with the right password then', async () => {
    await addUser('member@acme.test', 'member', PASSWORD);
    for (let i = 0; i < 5; i++) expect((await signIn('member@acme.test', 'wrong password!')).body.reason).toBe('bad_credentials');
    const throttled = await signIn('member@acme.test', PASSWORD);
    expect([throttled.status, throttled.body.reason]).toEqual([429, 'sign_in_throttled']);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await signIn('nobody@acme.test', PASSWORD)).body.reason).toBe('bad_credentials'); // unknown and wrong look alike
  });

  it('holds under concurrency: of 40 simultaneous sign-ins, at most 5 are checked, the rest 429; locked, the right password is refused', async () => {
    await addUser('burst@acme.test', 'member', PASSWORD);
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => signIn('burst@acme.test', i === 30 ? PASSWORD : `wrong password ${i}`)));
    const checked = answers.filter((a) => a.status !== 429);
    expect(checked.length).toBeLessThanOrEqual(5);
    expect(answers.filter((a) => a.status === 429).every((a) => a.body.reason === 'sign_in_throttled' && Number(a.headers.get('retry-after')) > 0)).toBe(true);
    // the right password checked among the five would have opened a session; otherwise the account is locked
    if (answers[30]!.status !== 200) expect((await signIn('burst@acme.test', PASSWORD)).status).toBe(429);
    // the refused attempts checked no password: they cost the address nothing, so others there still sign in
    await addUser('colleague@acme.test', 'member', PASSWORD);
    expect((await signIn('colleague@acme.test', PASSWORD)).status).toBe(200);
  });

  it('offboards at once: a member removed by an owner loses the open session (401) and cannot sign in again', async () => {
    await addUser('boss@acme.test', 'owner', PASSWORD);
    await addUser('leaver@acme.test', 'member', PASSWORD);
    const owner = await signIn('boss@acme.test', PASSWORD);
    const leaver = await signIn('leaver@acme.test', PASSWORD);
    const leaverCookie = sessionCookie(leaver);
    expect((await call(ctx, 'GET', '/api/dashboard/projects', { headers: { cookie: leaverCookie } })).status).toBe(200);
    const ownerHeaders = { cookie: sessionCookie(owner), 'x-csrf-token': owner.body.csrf_token };
    const removed = await call(ctx, 'DELETE', '/api/dashboard/org/people/members/leaver@acme.test', { headers: ownerHeaders });
    expect(removed.status).toBe(200);
    expect((await call(ctx, 'GET', '/api/dashboard/projects', { headers: { cookie: leaverCookie } })).status).toBe(401);
    expect((await signIn('leaver@acme.test', PASSWORD)).body.reason).toBe('bad_credentials');
    // an owner cannot lock themselves out
    expect((await call(ctx, 'DELETE', '/api/dashboard/org/people/members/boss@acme.test', { headers: ownerHeaders })).body.reason).toBe('cannot_remove_self');
  });

  it('gives a one-time set-password link when no password is given', async () => {
    const added = await addUser('invitee@acme.test', 'member');
    expect(added.set_password_path).toMatch(/^\/set-password#[\w-]{40,}$/);
    const setupToken = added.set_password_path.split('#')[1];
    expect((await call(ctx, 'POST', '/api/dashboard/password', { body: { token: setupToken, password: 'short' } })).status).toBe(400);
    expect((await call(ctx, 'POST', '/api/dashboard/password', { body: { token: setupToken, password: PASSWORD } })).body).toEqual({ email: 'invitee@acme.test' });
    expect((await call(ctx, 'POST', '/api/dashboard/password', { body: { token: setupToken, password: PASSWORD } })).body.reason).toBe('invalid_token');
    expect((await signIn('invitee@acme.test', PASSWORD)).body.role).toBe('member');
  });

  it('refuses a second account for one email, and a bad role, in one line', async () => {
    const again = await runCli(['admin', 'user', 'add', '--org', org, '--email', 'owner@acme.test', '--role', 'owner', '--password-stdin'], ctx.env, `${PASSWORD}\n`);
    expect([again.code, again.stderr.trim()]).toEqual([1, 'user_exists: owner@acme.test has an account already']);
    const role = await runCli(['admin', 'user', 'add', '--org', org, '--email', 'x@acme.test', '--role', 'admin'], ctx.env);
    expect(role.code).toBe(2);
  });

  it('keeps no password and no session token in the stores', async () => {
    const users = JSON.stringify(await ctx.runtime.mongo.db.collection('users').find({}).toArray());
    expect(users).toContain('scrypt$');
    expect(users).not.toContain(PASSWORD);
    const redis = ctx.runtime.queues.connection;
    const keys = await redis.keys(`${ctx.config.queuePrefix}:web-session:*`);
    const values = await Promise.all(keys.map((k) => redis.get(k)));
    expect(values.join('')).not.toContain(PASSWORD);
  });
});
