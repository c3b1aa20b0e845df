/**
 * A person's own account (/me: sessions, password, two-factor sign-in, API
 * tokens) and an owner's hold over the organisation's users (invite links,
 * sessions, disabling) and its single sign-on. These need a session cookie:
 * an API token manages neither accounts nor tokens.
 */
import Router, { type RouterContext } from '@koa/router';
import type { Middleware } from 'koa';
import { ConflictError, ForbiddenError } from '../../errors.ts';
import type { SsoInput } from '../../services/sso.service.ts';
import type { Role } from '../../store/users.store.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { readJson } from '../body.ts';
import { requireSessionCookie, requireSignedIn, ssoCallbackUrl, type WebState } from './dashboard-session.route.ts';

type WebContext = RouterContext<WebState>;

export const ownerOnly: Middleware<WebState> = async (ctx, next) => {
  if (ctx.state.web.role !== 'owner') throw new ForbiddenError('owner_required', 'only an owner of the organisation may do this');
  await next();
};

export function dashboardAccountRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<WebState>({ prefix: '/api/dashboard' });
  const { accounts } = deps;
  const body = async <T>(ctx: WebContext, schema: string) => deps.validator.check<T>(schema, await readJson(ctx, deps.config.bodyLimitBytes));
  const signedIn = [requireSignedIn(deps), requireSessionCookie];
  const owner = [...signedIn, ownerOnly];
  const me = (ctx: WebContext) => ctx.state.web.email;

  router.get('/me', ...signedIn, async (ctx) => {
    const user = await accounts.userOf(ctx.state.web.org, me(ctx));
    ctx.body = {
      email: user._id,
      role: user.role,
      two_factor: Boolean(user.totp),
      recovery_codes_left: user.recovery_hashes?.length ?? 0,
      last_sign_in: user.last_sign_in?.toISOString() ?? null,
    };
  });
  router.get('/me/sessions', ...signedIn, async (ctx) => {
    ctx.body = { sessions: await accounts.listSessions(me(ctx), ctx.state.webToken) };
  });
  router.delete('/me/sessions', ...signedIn, async (ctx) => {
    ctx.body = { ended: await accounts.endSessions(me(ctx), { except: ctx.state.webToken }) };
  });
  router.delete('/me/sessions/:id', ...signedIn, async (ctx) => {
    ctx.body = { ended: await accounts.endSessions(me(ctx), { id: ctx.params.id ?? '' }) };
  });
  router.post('/me/password', ...signedIn, async (ctx) => {
    const input = await body<{ current_password: string; new_password: string }>(ctx, 'change-password');
    ctx.body = await accounts.changePassword(ctx.state.web, ctx.state.webToken!, input.current_password, input.new_password, ctx.ip);
  });

  router.post('/me/2fa/start', ...signedIn, async (ctx) => {
    ctx.body = await accounts.startTwoFactor(me(ctx));
  });
  router.post('/me/2fa/confirm', ...signedIn, async (ctx) => {
    ctx.body = await accounts.confirmTwoFactor(me(ctx), (await body<{ code: string }>(ctx, 'otp-code')).code);
  });
  router.post('/me/2fa/disable', ...signedIn, async (ctx) => {
    await accounts.disableTwoFactor(me(ctx), (await body<{ code: string }>(ctx, 'otp-code')).code);
    ctx.body = { two_factor: false };
  });

  router.get('/me/tokens', ...signedIn, async (ctx) => {
    ctx.body = { tokens: await deps.tokens.list(me(ctx)) };
  });
  router.post('/me/tokens', ...signedIn, async (ctx) => {
    const input = await body<{ name: string; scopes: string[] }>(ctx, 'token-create');
    ctx.status = 201;
    ctx.body = await deps.tokens.create(ctx.state.web, input);
  });
  router.delete('/me/tokens/:id', ...signedIn, async (ctx) => {
    ctx.body = await deps.tokens.revoke(me(ctx), ctx.params.id ?? '');
  });

  // An owner adds a user with an invite link (a one-time set-password link, valid 24 hours, shown once).
  router.post('/org/users', ...owner, async (ctx) => {
    const input = await body<{ email: string; role: Role }>(ctx, 'user-invite');
    const added = await accounts.addUser({ org: ctx.state.web.org, email: input.email, role: input.role });
    ctx.status = 201;
    ctx.body = { email: added.email, role: added.role, invite_url: `${deps.config.publicUrl}${added.set_password_path}`, expires_in_hours: 24 };
  });
  const userEmail = async (ctx: WebContext) => (await accounts.userOf(ctx.state.web.org, ctx.params.email ?? ''))._id;
  router.get('/org/users/:email/sessions', ...owner, async (ctx) => {
    ctx.body = { sessions: await accounts.listSessions(await userEmail(ctx), ctx.state.webToken) };
  });
  router.delete('/org/users/:email/sessions', ...owner, async (ctx) => {
    ctx.body = { ended: await accounts.endSessions(await userEmail(ctx), { except: ctx.state.webToken }) };
  });
  router.delete('/org/users/:email/sessions/:id', ...owner, async (ctx) => {
    ctx.body = { ended: await accounts.endSessions(await userEmail(ctx), { id: ctx.params.id ?? '' }) };
  });
  router.patch('/org/users/:email', ...owner, async (ctx) => {
    const email = await userEmail(ctx);
    const { disabled } = await body<{ disabled: boolean }>(ctx, 'user-disable');
    if (email === me(ctx)) throw new ConflictError('cannot_disable_self', 'an owner cannot disable themselves; another owner can');
    await accounts.setDisabled(ctx.state.web.org, email, disabled);
    ctx.body = { email, disabled };
  });

  router.get('/org/sso', ...signedIn, async (ctx) => {
    ctx.body = { ...(await deps.sso.settings(ctx.state.web.org)), redirect_uri: ssoCallbackUrl(ctx) };
  });
  router.put('/org/sso', ...owner, async (ctx) => {
    ctx.body = await deps.sso.configure(ctx.state.web.org, await body<SsoInput>(ctx, 'sso-settings'));
  });
  router.delete('/org/sso', ...owner, async (ctx) => {
    ctx.body = await deps.sso.remove(ctx.state.web.org);
  });
  return router as unknown as Router<AppState>;
}
