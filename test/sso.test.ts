/**
 * Single sign-on end to end: Chromium signs in through Lookout's sign-in page
 * at a real OpenID provider (the certified `oidc-provider` package, started
 * here on loopback) and comes back signed in. A forged state, a replayed
 * code, an ID token for another audience and an email outside the allowed
 * domains are each refused; a member of an organisation that requires SSO
 * cannot use a password.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as jose from 'jose';
import Provider from 'oidc-provider';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, dashboardHeaders, startTestContext, type TestContext } from './helpers/context.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const CLIENT = { id: 'lookout', secret: 'a client secret of the test provider' };
const OWNER = { email: 'owner@corp.test', password: 'owner password for tests' };

let ctx: TestContext;
let browser: Browser;
let issuer: string;
let idp: http.Server;
let org: number;
/** When set, the provider's token answer carries this ID token instead (a tampering network, or a confused provider). */
let swapIdToken: ((idToken: string) => Promise<string>) | null = null;
/** When set, the provider's redirect back to Lookout is held: the browser is not sent, the address is handed here. */
let holdCallback: ((url: URL) => void) | null = null;
let signingKey: jose.CryptoKey;
let signingKid: string;

async function startProvider(redirectUri: string) {
  const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await jose.exportJWK(privateKey)), kid: 'test-key', use: 'sig', alg: 'RS256' };
  signingKey = privateKey;
  signingKid = jwk.kid;
  idp = http.createServer();
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT.id,
        client_secret: CLIENT.secret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    // the login typed at the provider's (development) sign-in form is the person's email
    async findAccount(_ctx, id) {
      return { accountId: id, claims: async () => ({ sub: id, email: id, email_verified: true }) };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    jwks: { keys: [jwk] },
    cookies: { keys: ['cookie key of the test provider'] },
    pkce: { required: () => true },
  });
  provider.use(async (koa, next) => {
    await next();
    const body = koa.body as { id_token?: string } | undefined;
    if (koa.path === '/token' && swapIdToken && body?.id_token) koa.body = { ...body, id_token: await swapIdToken(body.id_token) };
    const location = String(koa.response.get('location') ?? '');
    if (holdCallback && location.startsWith(redirectUri)) {
      holdCallback(new URL(location));
      koa.remove('location');
      koa.status = 200;
      koa.type = 'text/html';
      koa.body = '<p>held</p>';
    }
  });
  idp.on('request', provider.callback());
}

beforeAll(async () => {
  // the provider is on loopback: an inward issuer, allowed here as an operator would for a lab provider
  ctx = await startTestContext({ SSO_ALLOW_PRIVATE: 'true' });
  await startProvider(`${ctx.api}/api/dashboard/sso/callback`);
  org = Number((await ctx.runtime.admin.createOrg({ name: 'Corp', plan: 'business', seats: null })).id);
  await ctx.runtime.accounts.addUser({ org, email: OWNER.email, role: 'owner', password: OWNER.password });
  await ctx.runtime.accounts.addUser({ org, email: 'member@corp.test', role: 'member', password: OWNER.password });
  expect(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (npm test does)`).toBe(true);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  idp?.close();
  await ctx?.close();
});

/** The owner's dashboard calls (cookie and CSRF token). */
async function asOwner() {
  const res = await call(ctx, 'POST', '/api/dashboard/session', { body: OWNER });
  const headers = dashboardHeaders(res);
  return (method: string, path: string, body?: unknown) => call(ctx, method, `/api/dashboard${path}`, { headers, body });
}

/**
 * From Lookout's sign-in page, "Continue with single sign-on", then the provider's sign-in and consent pages as far as they are
 * asked; at the provider the person signs in as `providerLogin` (by default the email typed at Lookout).
 */
async function startAtSignInPage(page: Page, email: string, providerLogin = email): Promise<void> {
  await page.goto(`${ctx.api}/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByRole('button', { name: 'Continue with single sign-on' }).click();
  await page.waitForURL((url) => url.href.startsWith(issuer));
  for (let step = 0; step < 4 && page.url().startsWith(issuer); step++) {
    const submit = page.locator('button[type="submit"]');
    if ((await submit.count()) === 0) break; // the redirect back was held
    const login = page.locator('input[name="login"]');
    if (await login.count()) {
      await login.fill(providerLogin);
      await page.locator('input[name="password"]').fill('any password: the test provider takes it');
    }
    const before = page.url();
    await Promise.all([page.waitForURL((url) => url.href !== before, { timeout: 15_000 }).catch(() => {}), submit.first().click()]);
  }
}

/** Runs a sign-in up to the provider's redirect back to Lookout, which is held: its URL is returned unvisited. */
async function heldCallback(page: Page, email: string, providerLogin = email): Promise<URL> {
  let held: URL | null = null;
  holdCallback = (url) => (held = url);
  try {
    await startAtSignInPage(page, email, providerLogin);
    await expect.poll(() => held, { timeout: 15_000 }).not.toBeNull();
  } finally {
    holdCallback = null;
  }
  return held!;
}

/** The reason (and message) the sign-in page shows after a refused single sign-on. */
async function refusal(page: Page, callback: URL): Promise<string> {
  await page.goto(callback.href);
  await page.waitForURL((url) => url.pathname === '/sign-in');
  const q = new URL(page.url()).searchParams;
  lastMessage = q.get('message') ?? '';
  return q.get('sso_error') ?? '';
}
let lastMessage = '';

describe('single sign-on through OpenID Connect', () => {
  it('an owner sets the provider up; an inward issuer is refused unless the operator allows it', async () => {
    const owner = await asOwner();
    const settings = { issuer, client_id: CLIENT.id, client_secret: CLIENT.secret, domains: ['corp.test'], default_role: 'member', required: false };
    const saved = await owner('PUT', '/org/sso', settings);
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body.sso).toEqual({ issuer, client_id: CLIENT.id, domains: ['corp.test'], default_role: 'member', required: false });
    // the redirect URI to register is the one a sign-in started at this address comes back to
    expect((await owner('GET', '/org/sso')).body.redirect_uri).toBe(`${ctx.api}/api/dashboard/sso/callback`);
    const stored = JSON.stringify(await ctx.runtime.mongo.db.collection<{ _id: number }>('orgs').findOne({ _id: org }));
    expect(stored).not.toContain(CLIENT.secret);
    expect((await owner('PUT', '/org/sso', { ...settings, issuer: 'http://127.0.0.1:1' })).body.reason).toBe('sso_discovery_failed');

    const strict = await startTestContext();
    try {
      const other = Number((await strict.runtime.admin.createOrg({ name: 'Other', plan: 'business', seats: null })).id);
      await strict.runtime.accounts.addUser({ org: other, email: 'o@other.test', role: 'owner', password: OWNER.password });
      const res = await call(strict, 'POST', '/api/dashboard/session', { body: { email: 'o@other.test', password: OWNER.password } });
      const headers = dashboardHeaders(res);
      const refused = await call(strict, 'PUT', '/api/dashboard/org/sso', { headers, body: { ...settings, domains: ['other.test'] } });
      expect(refused.body.reason).toBe('invalid_issuer'); // http, and inward: neither without SSO_ALLOW_PRIVATE
      const inward = await call(strict, 'PUT', '/api/dashboard/org/sso', { headers, body: { ...settings, issuer: 'https://127.0.0.1:1', domains: ['other.test'] } });
      expect([inward.body.reason, inward.body.message]).toEqual(['sso_discovery_failed', expect.stringContaining('SSO_ALLOW_PRIVATE')]);
    } finally {
      await strict.close();
    }
  });

  it('signs a new person of an allowed domain in from the sign-in page, and makes them a member', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await startAtSignInPage(page, 'Alice@corp.test');
    await page.waitForURL(`${ctx.api}/projects`);
    await page.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
    const session = await page.request.get(`${ctx.api}/api/dashboard/session`);
    expect(await session.json()).toMatchObject({ email: 'alice@corp.test', role: 'member' });
    const sessions = (await (await page.request.get(`${ctx.api}/api/dashboard/me/sessions`)).json()).sessions;
    expect(sessions).toEqual([expect.objectContaining({ via: 'sso', current: true })]);
    expect((await ctx.runtime.stores.orgs.get(org))!.members).toContain('alice@corp.test');
    await context.close();
  });

  it('refuses a forged state, a replayed code, an ID token for another audience and an email outside the domains', { timeout: 90_000 }, async () => {
    const context = await browser.newContext();
    const page = await context.newPage();

    // a state this browser did not start
    const first = await heldCallback(page, 'bob@corp.test');
    const forged = new URL(first);
    forged.searchParams.set('state', 'a-state-of-the-attackers-choosing');
    expect(await refusal(page, forged)).toBe('sso_state_mismatch');

    // the code of a finished sign-in, replayed in a fresh one: the provider refuses it
    const used = await heldCallback(page, 'bob@corp.test');
    await page.goto(used.href);
    await page.waitForURL(`${ctx.api}/projects`);
    const again = await heldCallback(page, 'bob@corp.test');
    again.searchParams.set('code', used.searchParams.get('code')!);
    expect(await refusal(page, again)).toBe('sso_failed');
    expect(lastMessage).toMatch(/invalid_grant/);
    // and the first callback itself, visited twice: its state is used up
    expect(await refusal(page, used)).toBe('sso_state_mismatch');

    // an ID token signed by the provider's own key, but issued to another client
    swapIdToken = async (idToken) => {
      const claims = jose.decodeJwt(idToken);
      return new jose.SignJWT({ ...claims, aud: 'another-client' }).setProtectedHeader({ alg: 'RS256', kid: signingKid }).sign(signingKey);
    };
    try {
      expect(await refusal(page, await heldCallback(page, 'bob@corp.test'))).toBe('sso_failed');
      expect(lastMessage).toMatch(/"aud"/);
    } finally {
      swapIdToken = null;
    }
    await context.close();

    // a person the provider vouches for, but outside the organisation's domains (a provider shared with others)
    const outsider = await browser.newContext();
    const outsiderPage = await outsider.newPage();
    expect(await refusal(outsiderPage, await heldCallback(outsiderPage, 'eve@corp.test', 'eve@elsewhere.test'))).toBe('sso_domain_not_allowed');
    await outsiderPage.getByRole('alert').filter({ hasText: 'sso_domain_not_allowed' }).waitFor();
    expect(await ctx.runtime.stores.users.get('eve@elsewhere.test')).toBeNull();
    // and an address of a domain no organisation signs in through is sent back before any provider
    await outsiderPage.goto(`${ctx.api}/sign-in`);
    await outsiderPage.getByLabel('Email').fill('eve@elsewhere.test');
    await outsiderPage.getByRole('button', { name: 'Continue with single sign-on' }).click();
    await outsiderPage.getByRole('alert').filter({ hasText: 'sso_not_configured' }).waitFor();
    await outsider.close();
  });

  it('with SSO required, a member cannot sign in with a password; an owner still can', async () => {
    const owner = await asOwner();
    await owner('PUT', '/org/sso', { issuer, client_id: CLIENT.id, domains: ['corp.test'], default_role: 'member', required: true });
    const member = await call(ctx, 'POST', '/api/dashboard/session', { body: { email: 'member@corp.test', password: OWNER.password } });
    expect([member.status, member.body.reason]).toEqual([403, 'sso_required']);
    expect((await call(ctx, 'POST', '/api/dashboard/session', { body: OWNER })).status).toBe(200);
  });
});
