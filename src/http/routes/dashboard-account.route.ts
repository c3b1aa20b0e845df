/**
 * A person's own account (/me: sessions, password, two-factor sign-in, API
 * tokens) and an owner's hold over the organisation's users (invite links,
 * sessions, disabling) and its single sign-on. These need a session cookie:
 * an API token manages neither accounts nor tokens.
 */
import Router, { type RouterContext } from '@koa/router';
import type { Middleware } from 'koa';
import { ConflictError, ForbiddenError } from '../../errors.ts';
import { contracted } from '../contract.ts';
import { PARAMS } from '../params.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { requireSessionCookie, requireSignedIn, ssoCallbackUrl, type WebState } from './dashboard-session.route.ts';

type WebContext = RouterContext<WebState>;

export const ownerOnly: Middleware<WebState> = async (ctx, next) => {
  if (ctx.state.web.role !== 'owner') throw new ForbiddenError('owner_required', 'only an owner of the organisation may do this');
  await next();
};

export function dashboardAccountRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<WebState>({ prefix: '/api/dashboard' });
  const routes = contracted(router, deps);
  const { accounts } = deps;
  const signedIn = [requireSignedIn(deps), requireSessionCookie];
  const owner = [...signedIn, ownerOnly];
  const me = (ctx: WebContext) => ctx.state.web.email;

  routes.get(
    '/me',
    { tag: 'dashboard', summary: 'Your account: role, two-factor sign-in, recovery codes left, last sign-in', auth: 'session', ok: { 200: { description: 'your account', schema: 'account' } } },
    ...signedIn,
    async (ctx) => {
      const user = await accounts.userOf(ctx.state.web.org, me(ctx));
      ctx.body = {
        email: user._id,
        role: user.role,
        two_factor: Boolean(user.totp),
        recovery_codes_left: user.recovery_hashes?.length ?? 0,
        last_sign_in: user.last_sign_in?.toISOString() ?? null,
      };
    },
  );
  routes.get(
    '/me/sessions',
    { tag: 'dashboard', summary: 'Your open sessions (`current` marks this one)', auth: 'session', ok: { 200: { description: 'the open sessions', schema: 'web-sessions' } } },
    ...signedIn,
    async (ctx) => {
      ctx.body = { sessions: await accounts.listSessions(me(ctx), ctx.state.webToken) };
    },
  );
  routes.delete(
    '/me/sessions',
    { tag: 'dashboard', summary: 'End every session of yours but this one', auth: 'session', ok: { 200: { description: 'how many sessions ended', schema: 'ended' } } },
    ...signedIn,
    async (ctx) => {
      ctx.body = { ended: await accounts.endSessions(me(ctx), { except: ctx.state.webToken }) };
    },
  );
  routes.delete(
    '/me/sessions/:id',
    { tag: 'dashboard', summary: 'End one of your sessions', auth: 'session', params: [PARAMS.session], ok: { 200: { description: 'how many sessions ended', schema: 'ended' } } },
    ...signedIn,
    async (ctx, { params }) => {
      ctx.body = { ended: await accounts.endSessions(me(ctx), { id: params.id }) };
    },
  );
  routes.post(
    '/me/password',
    {
      tag: 'dashboard',
      summary: 'Change your password (the current one checked, throttled); your other sessions end',
      auth: 'session',
      body: { schema: 'change-password' },
      ok: { 200: { description: 'how many of your other sessions ended', schema: 'password-changed' } },
      errors: [400, 429],
    },
    ...signedIn,
    async (ctx, { body: input }) => {
      ctx.body = await accounts.changePassword(ctx.state.web, ctx.state.webToken!, input.current_password, input.new_password, ctx.ip);
    },
  );

  routes.post(
    '/me/2fa/start',
    {
      tag: 'dashboard',
      summary: 'Start two-factor enrolment: a TOTP secret, its otpauth:// URL and a QR code (SVG)',
      auth: 'session',
      ok: { 200: { description: 'the enrolment to confirm', schema: 'two-factor-enrolment' } },
    },
    ...signedIn,
    async (ctx) => {
      ctx.body = await accounts.startTwoFactor(me(ctx));
    },
  );
  routes.post(
    '/me/2fa/confirm',
    {
      tag: 'dashboard',
      summary: 'Confirm enrolment with a code: two-factor sign-in is on; ten single-use recovery codes, shown once',
      auth: 'session',
      body: { schema: 'otp-code' },
      ok: { 200: { description: 'the recovery codes, shown only here', schema: 'recovery-codes' } },
      errors: [400, 409],
    },
    ...signedIn,
    async (ctx, { body }) => {
      ctx.body = await accounts.confirmTwoFactor(me(ctx), body.code);
    },
  );
  routes.post(
    '/me/2fa/disable',
    {
      tag: 'dashboard',
      summary: 'Turn two-factor sign-in off with a current code or a recovery code (refused when the organisation requires it)',
      auth: 'session',
      body: { schema: 'otp-code' },
      ok: { 200: { description: 'two-factor sign-in is off', schema: 'two-factor-off' } },
      errors: [400, 409],
    },
    ...signedIn,
    async (ctx, { body }) => {
      await accounts.disableTwoFactor(me(ctx), body.code);
      ctx.body = { two_factor: false };
    },
  );

  routes.get(
    '/me/tokens',
    { tag: 'dashboard', summary: 'Your API tokens: name, scopes, hint, created and last used (never the token)', auth: 'session', ok: { 200: { description: 'your tokens', schema: 'token-list' } } },
    ...signedIn,
    async (ctx) => {
      ctx.body = { tokens: await deps.tokens.list(me(ctx)) };
    },
  );
  routes.post(
    '/me/tokens',
    {
      tag: 'dashboard',
      summary: 'A new API token with scopes; the token is in this answer only',
      auth: 'session',
      body: { schema: 'token-create' },
      ok: { 201: { description: 'the token, shown only here', schema: 'token-created' } },
      errors: [400],
    },
    ...signedIn,
    async (ctx, { body: input }) => {
      ctx.status = 201;
      ctx.body = await deps.tokens.create(ctx.state.web, input);
    },
  );
  routes.delete(
    '/me/tokens/:id',
    { tag: 'dashboard', summary: 'Revoke one of your API tokens', auth: 'session', params: [PARAMS.token], ok: { 200: { description: 'what was revoked', schema: 'revoked' } }, errors: [404] },
    ...signedIn,
    async (ctx, { params }) => {
      ctx.body = await deps.tokens.revoke(me(ctx), params.id);
    },
  );

  // An owner adds a user with an invite link (a one-time set-password link, valid 24 hours, shown once).
  routes.post(
    '/org/users',
    {
      tag: 'dashboard',
      summary: 'Add a dashboard user (owner): an invite link to set a password, valid 24 hours, shown once',
      auth: 'session',
      body: { schema: 'user-invite' },
      ok: { 201: { description: 'the user and their invite link', schema: 'user-invited' } },
      errors: [400, 409],
    },
    ...owner,
    async (ctx, { body: input }) => {
      const added = await accounts.addUser({ org: ctx.state.web.org, email: input.email, role: input.role });
      ctx.status = 201;
      ctx.body = { email: added.email, role: added.role, invite_url: `${deps.config.publicUrl}${added.set_password_path}`, expires_in_hours: 24 };
    },
  );
  const userEmail = async (ctx: WebContext, email: string) => (await accounts.userOf(ctx.state.web.org, email))._id;
  routes.get(
    '/org/users/:email/sessions',
    { tag: 'dashboard', summary: "A user's open sessions (owner)", auth: 'session', params: [PARAMS.userEmail], ok: { 200: { description: 'the open sessions', schema: 'web-sessions' } }, errors: [404] },
    ...owner,
    async (ctx, { params }) => {
      ctx.body = { sessions: await accounts.listSessions(await userEmail(ctx, params.email), ctx.state.webToken) };
    },
  );
  routes.delete(
    '/org/users/:email/sessions',
    {
      tag: 'dashboard',
      summary: 'End every session of a user (owner; yours but this one)',
      auth: 'session',
      params: [PARAMS.userEmail],
      ok: { 200: { description: 'how many sessions ended', schema: 'ended' } },
      errors: [404],
    },
    ...owner,
    async (ctx, { params }) => {
      ctx.body = { ended: await accounts.endSessions(await userEmail(ctx, params.email), { except: ctx.state.webToken }) };
    },
  );
  routes.delete(
    '/org/users/:email/sessions/:id',
    {
      tag: 'dashboard',
      summary: 'End one session of a user (owner)',
      auth: 'session',
      params: [PARAMS.userEmail, PARAMS.session],
      ok: { 200: { description: 'how many sessions ended', schema: 'ended' } },
      errors: [404],
    },
    ...owner,
    async (ctx, { params }) => {
      ctx.body = { ended: await accounts.endSessions(await userEmail(ctx, params.email), { id: params.id }) };
    },
  );
  routes.patch(
    '/org/users/:email',
    {
      tag: 'dashboard',
      summary: 'Disable a user (every session and token ends, sign-in refused) or enable them (owner)',
      auth: 'session',
      params: [PARAMS.userEmail],
      body: { schema: 'user-disable' },
      ok: { 200: { description: 'the user', schema: 'user-disabled' } },
      errors: [400, 404, 409],
    },
    ...owner,
    async (ctx, { params, body: { disabled } }) => {
      const email = await userEmail(ctx, params.email);
      if (email === me(ctx)) throw new ConflictError('cannot_disable_self', 'an owner cannot disable themselves; another owner can');
      await accounts.setDisabled(ctx.state.web.org, email, disabled);
      ctx.body = { email, disabled };
    },
  );

  routes.get(
    '/org/sso',
    {
      tag: 'dashboard',
      summary: "The organisation's single sign-on (never the client secret) and the redirect URI to register",
      auth: 'session',
      ok: { 200: { description: 'the single sign-on and the redirect URI', schema: 'org-sso' } },
    },
    ...signedIn,
    async (ctx) => {
      ctx.body = { ...(await deps.sso.settings(ctx.state.web.org)), redirect_uri: ssoCallbackUrl(ctx) };
    },
  );
  routes.put(
    '/org/sso',
    {
      tag: 'dashboard',
      summary: "Set the organisation's OpenID provider (owner); the issuer is discovered first",
      auth: 'session',
      body: { schema: 'sso-settings' },
      ok: { 200: { description: 'the single sign-on set', schema: 'sso' } },
      errors: [400],
    },
    ...owner,
    async (ctx, { body }) => {
      ctx.body = await deps.sso.configure(ctx.state.web.org, body);
    },
  );
  routes.delete(
    '/org/sso',
    { tag: 'dashboard', summary: 'Turn single sign-on off (owner)', auth: 'session', ok: { 200: { description: 'single sign-on is off', schema: 'sso' } } },
    ...owner,
    async (ctx) => {
      ctx.body = await deps.sso.remove(ctx.state.web.org);
    },
  );
  return router as unknown as Router<AppState>;
}
