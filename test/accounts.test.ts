/**
 * What a company asks of accounts, against the real API, Redis and FerretDB:
 * sessions an owner sees and ends, offboarding by disabling, invite links,
 * TOTP two-factor sign-in with single-use recovery codes, and API tokens with
 * scopes that stop working with their user.
 */
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, dashboardHeaders, startTestContext, type TestContext } from './helpers/context.ts';
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

/** A signed-in browser: its cookie and CSRF token, and calls made with them. */
async function signIn(email: string, password = PASSWORD, otp?: string, userAgent = 'test-browser') {
  const res = await call(ctx, 'POST', '/api/dashboard/session', { body: { email, password, ...(otp ? { otp } : {}) }, headers: { 'user-agent': userAgent } });
  const headers = dashboardHeaders(res);
  return { res, headers, as: (method: string, path: string, body?: unknown) => call(ctx, method, `/api/dashboard${path}`, { headers, body }) };
}

async function addUser(email: string, role: 'owner' | 'member') {
  await ctx.runtime.accounts.addUser({ org: Number(org), email, role, password: PASSWORD });
}

/** A TOTP code of the step `offset` steps from now (the server accepts one step either side). */
const code = (secret: string, offset = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + offset * 30 });

describe('sessions an owner can see and end', () => {
  it('lists each session with where it was opened; an owner ends one, the user ends the others; a new password ends the rest', async () => {
    await addUser('owner1@acme.test', 'owner');
    await addUser('ann@acme.test', 'member');
    const owner = await signIn('owner1@acme.test');
    const laptop = await signIn('ann@acme.test', PASSWORD, undefined, 'laptop');
    const phone = await signIn('ann@acme.test', PASSWORD, undefined, 'phone');
    const tablet = await signIn('ann@acme.test', PASSWORD, undefined, 'tablet');

    const own = (await laptop.as('GET', '/me/sessions')).body.sessions;
    expect(own.map((s: { user_agent: string }) => s.user_agent).sort()).toEqual(['laptop', 'phone', 'tablet']);
    expect(own.filter((s: { current: boolean }) => s.current).map((s: { user_agent: string }) => s.user_agent)).toEqual(['laptop']);
    expect(own[0]).toMatchObject({ ip: '127.0.0.1', via: 'password', id: expect.stringMatching(/^[0-9a-f]{64}$/) });

    const users = (await owner.as('GET', '/org')).body.users;
    expect(users.find((u: { email: string }) => u.email === 'ann@acme.test')).toMatchObject({ sessions: 3, last_sign_in: expect.any(String), two_factor: false, disabled: false });

    // the owner ends the phone's session: its next request is 401
    const listed = (await owner.as('GET', '/org/users/ann@acme.test/sessions')).body.sessions as { id: string; user_agent: string }[];
    const phoneId = listed.find((s) => s.user_agent === 'phone')!.id;
    expect((await owner.as('DELETE', `/org/users/ann@acme.test/sessions/${phoneId}`)).body).toEqual({ ended: 1 });
    expect((await phone.as('GET', '/projects')).status).toBe(401);
    expect((await laptop.as('GET', '/projects')).status).toBe(200);
    // a member cannot see another's sessions
    expect((await laptop.as('GET', '/org/users/owner1@acme.test/sessions')).body.reason).toBe('owner_required');

    // the user ends their other sessions
    expect((await laptop.as('DELETE', '/me/sessions')).body).toEqual({ ended: 1 });
    expect((await tablet.as('GET', '/projects')).status).toBe(401);

    // a password change checks the current one and ends every other session
    const again = await signIn('ann@acme.test');
    expect((await laptop.as('POST', '/me/password', { current_password: 'wrong password!', new_password: 'another long password' })).body.reason).toBe('bad_credentials');
    expect((await laptop.as('POST', '/me/password', { current_password: PASSWORD, new_password: 'another long password' })).body).toEqual({ ended_sessions: 1 });
    expect((await again.as('GET', '/projects')).status).toBe(401);
    expect((await laptop.as('GET', '/projects')).status).toBe(200);
    expect((await signIn('ann@acme.test', 'another long password')).res.status).toBe(200);
  });

  it('disabling a user (dashboard or CLI) ends their sessions within a second and refuses their sign-in; enabling lets them back', async () => {
    await addUser('owner2@acme.test', 'owner');
    await addUser('bob@acme.test', 'member');
    const owner = await signIn('owner2@acme.test');
    const bob = await signIn('bob@acme.test');
    expect((await owner.as('PATCH', '/org/users/bob@acme.test', { disabled: true })).body).toEqual({ email: 'bob@acme.test', disabled: true });
    expect((await bob.as('GET', '/projects')).status).toBe(401);
    expect((await signIn('bob@acme.test')).res.body.reason).toBe('account_disabled');
    expect((await owner.as('PATCH', '/org/users/owner2@acme.test', { disabled: true })).body.reason).toBe('cannot_disable_self');

    expect((await runCli(['admin', 'user', 'enable', '--org', org, '--email', 'bob@acme.test'], ctx.env)).code).toBe(0);
    const back = await signIn('bob@acme.test');
    expect(back.res.status).toBe(200);
    const cli = await runCli(['admin', 'user', 'disable', '--org', org, '--email', 'bob@acme.test'], ctx.env);
    expect([cli.code, JSON.parse(cli.stdout)]).toEqual([0, { email: 'bob@acme.test', org, disabled: true }]);
    expect((await back.as('GET', '/projects')).status).toBe(401);
  });

  it('an owner adds a user from the dashboard with an invite link, shown once and valid 24 hours', async () => {
    await addUser('owner3@acme.test', 'owner');
    const owner = await signIn('owner3@acme.test');
    const invited = await owner.as('POST', '/org/users', { email: 'New@Acme.test', role: 'member' });
    expect(invited.status).toBe(201);
    expect(invited.body).toEqual({ email: 'new@acme.test', role: 'member', invite_url: expect.stringMatching(/\/set-password#[\w-]{40,}$/), expires_in_hours: 24 });
    const setup = invited.body.invite_url.split('#')[1];
    expect((await call(ctx, 'POST', '/api/dashboard/password', { body: { token: setup, password: PASSWORD } })).body).toEqual({ email: 'new@acme.test' });
    const member = await signIn('new@acme.test');
    expect(member.res.body.role).toBe('member');
    expect((await member.as('POST', '/org/users', { email: 'x@acme.test', role: 'owner' })).body.reason).toBe('owner_required');
    expect((await owner.as('POST', '/org/users', { email: 'new@acme.test', role: 'member' })).body.reason).toBe('user_exists');
  });
});

describe('two-factor sign-in', () => {
  it('enrols with a QR code, then needs a code at sign-in; each code and each recovery code works once', async () => {
    await addUser('tess@acme.test', 'member');
    const tess = await signIn('tess@acme.test');
    const started = (await tess.as('POST', '/me/2fa/start')).body;
    expect(started.otpauth_url).toMatch(/^otpauth:\/\/totp\/Lookout:tess%40acme\.test\?.*secret=/);
    expect(started.qr_svg).toMatch(/^<svg/);
    expect((await tess.as('POST', '/me/2fa/confirm', { code: '000000' })).body.reason).toBe('bad_otp');
    const confirmed = await tess.as('POST', '/me/2fa/confirm', { code: await code(started.secret) });
    const recovery = confirmed.body.recovery_codes as string[];
    expect(recovery).toHaveLength(10);
    expect(new Set(recovery).size).toBe(10);

    expect((await signIn('tess@acme.test')).res.body.reason).toBe('otp_required');
    expect((await signIn('tess@acme.test', PASSWORD, '123456')).res.body.reason).toBe('bad_otp');
    const withCode = await code(started.secret, 1);
    expect((await signIn('tess@acme.test', PASSWORD, withCode)).res.status).toBe(200);
    expect((await signIn('tess@acme.test', PASSWORD, withCode)).res.body.reason).toBe('bad_otp'); // replayed
    expect((await signIn('tess@acme.test', PASSWORD, recovery[0])).res.status).toBe(200);
    expect((await signIn('tess@acme.test', PASSWORD, recovery[0])).res.body.reason).toBe('bad_otp'); // used up
    expect((await tess.as('GET', '/me')).body).toMatchObject({ two_factor: true, recovery_codes_left: 9 });

    // nothing readable is stored: the seed is sealed, recovery codes are hashes
    const stored = JSON.stringify(await ctx.runtime.mongo.db.collection<{ _id: string }>('users').findOne({ _id: 'tess@acme.test' }));
    expect(stored).not.toContain(started.secret);
    for (const r of recovery) expect(stored).not.toContain(r);
  });

  it('wrong codes are throttled like passwords: locked, the right code is refused too', async () => {
    await addUser('ursula@acme.test', 'member');
    const ursula = await signIn('ursula@acme.test');
    const { secret } = (await ursula.as('POST', '/me/2fa/start')).body;
    await ursula.as('POST', '/me/2fa/confirm', { code: await code(secret) });
    for (let i = 0; i < 5; i++) expect((await signIn('ursula@acme.test', PASSWORD, `00000${i}`)).res.body.reason).toBe('bad_otp');
    const locked = await signIn('ursula@acme.test', PASSWORD, await code(secret, 1));
    expect([locked.res.status, locked.res.body.reason]).toEqual([429, 'sign_in_throttled']);
  });

  it('an organisation that requires it lets a user without it do nothing but turn it on; owners see who has it', async () => {
    const other = (await ctx.runtime.admin.createOrg({ name: 'Strict', plan: 'business', seats: null })).id;
    await ctx.runtime.accounts.addUser({ org: Number(other), email: 'boss@strict.test', role: 'owner', password: PASSWORD });
    await ctx.runtime.accounts.addUser({ org: Number(other), email: 'vic@strict.test', role: 'member', password: PASSWORD });
    const boss = await signIn('boss@strict.test');
    expect((await boss.as('PATCH', '/org', { require_2fa: true })).body.require_2fa).toBe(true);
    // the owner too is held until enrolled
    expect((await boss.as('GET', '/projects')).body.reason).toBe('two_factor_setup_required');
    const { secret } = (await boss.as('POST', '/me/2fa/start')).body;
    await boss.as('POST', '/me/2fa/confirm', { code: await code(secret) });
    expect((await boss.as('GET', '/projects')).status).toBe(200);

    const vic = await signIn('vic@strict.test');
    expect(vic.res.body.setup_2fa).toBe(true);
    expect((await vic.as('GET', '/projects')).body.reason).toBe('two_factor_setup_required');
    const users = (await boss.as('GET', '/org')).body.users as { email: string; two_factor: boolean }[];
    expect(users.map((u) => [u.email, u.two_factor])).toEqual([
      ['boss@strict.test', true],
      ['vic@strict.test', false],
    ]);
    // turning it off is refused while the organisation requires it
    expect((await boss.as('POST', '/me/2fa/disable', { code: await code(secret, -1) })).body.reason).toBe('two_factor_required');
  });
});

describe('API tokens', () => {
  it('act within their scopes and the role of their user, are stored hashed, and stop with revocation or offboarding', async () => {
    await addUser('owner4@acme.test', 'owner');
    await addUser('tom@acme.test', 'member');
    const owner = await signIn('owner4@acme.test');
    const reader = await owner.as('POST', '/me/tokens', { name: 'ci reader', scopes: ['project:read'] });
    expect(reader.status).toBe(201);
    expect(reader.body).toMatchObject({ name: 'ci reader', scopes: ['project:read'], token: expect.stringMatching(/^lkt_[\w-]{43}$/), last_used_at: null });
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    const asToken = (token: string, method: string, path: string, body?: unknown) => call(ctx, method, `/api/dashboard${path}`, { headers: bearer(token), body });

    expect((await asToken(reader.body.token, 'GET', '/projects')).status).toBe(200);
    const write = await asToken(reader.body.token, 'POST', '/projects', { name: 'shop' });
    expect([write.status, write.body.reason]).toEqual([403, 'scope_required']);
    expect((await asToken(reader.body.token, 'GET', '/org')).body.reason).toBe('scope_required');
    expect((await asToken(reader.body.token, 'GET', '/me/tokens')).body.reason).toBe('token_not_allowed');
    expect((await asToken('lkt_not-a-token', 'GET', '/projects')).body.reason).toBe('invalid_token');

    const writer = (await owner.as('POST', '/me/tokens', { name: 'deploy', scopes: ['project:read', 'project:write', 'org:read'] })).body;
    expect((await asToken(writer.token, 'POST', '/projects', { name: 'shop' })).status).toBe(201); // no CSRF token: not a cookie
    expect((await asToken(writer.token, 'GET', '/org')).status).toBe(200);
    expect((await owner.as('POST', '/me/tokens', { name: 'x', scopes: ['admin'] })).body.reason).toBe('invalid_body');

    const listed = (await owner.as('GET', '/me/tokens')).body.tokens as { id: string; name: string; hint: string; last_used_at: string | null }[];
    expect(listed.map((t) => t.name)).toEqual(['deploy', 'ci reader']);
    expect(listed.every((t) => t.last_used_at !== null && t.hint.startsWith('lkt_'))).toBe(true);
    const stored = JSON.stringify(await ctx.runtime.mongo.db.collection('api_tokens').find({}).toArray());
    expect(stored).not.toContain(reader.body.token);
    expect(stored).not.toContain(writer.token);

    expect((await owner.as('DELETE', `/me/tokens/${reader.body.id}`)).body).toEqual({ revoked: reader.body.id });
    expect((await asToken(reader.body.token, 'GET', '/projects')).body.reason).toBe('invalid_token');

    // a member's token with project:write still cannot do an owner's work; removing the member ends the token
    const cli = await runCli(['admin', 'token', 'create', '--org', org, '--email', 'tom@acme.test', '--name', 'script', '--scopes', 'project:read,project:write'], ctx.env);
    expect(cli.code, cli.stderr).toBe(0);
    const tomToken = JSON.parse(cli.stdout).token as string;
    expect((await asToken(tomToken, 'POST', '/projects', { name: 'x' })).body.reason).toBe('owner_required');
    expect((await asToken(tomToken, 'GET', '/projects')).status).toBe(200);
    await owner.as('DELETE', '/org/people/members/tom@acme.test');
    expect((await asToken(tomToken, 'GET', '/projects')).status).toBe(401);
  });
});
