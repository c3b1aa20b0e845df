/**
 * The dashboard's session: sign in (an HttpOnly, SameSite=Lax cookie; Secure
 * with COOKIE_SECURE), read who is signed in with the session's CSRF token,
 * sign out (server-side), and set a password with a one-time token. Every
 * state-changing dashboard request carries the CSRF token in X-CSRF-Token.
 */
import Router from '@koa/router';
import crypto from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { ForbiddenError, UnauthorizedError } from '../../errors.ts';
import { SESSION_SECONDS, type WebSession } from '../../services/accounts.service.ts';
import type { AppDeps, AppState } from '../app.ts';
import { readJson } from '../body.ts';

export const SESSION_COOKIE = 'lookout_session';

function sessionView(session: WebSession) {
  return { email: session.email, org: String(session.org), role: session.role, csrf_token: session.csrf };
}

/** The signed-in user, or a 401; for state-changing methods also the CSRF check (403). */
export function requireSignedIn(deps: Pick<AppDeps, 'accounts'>): Middleware<AppState & { web: WebSession; webToken: string }> {
  return async (ctx, next) => {
    const cookie = ctx.cookies.get(SESSION_COOKIE);
    const session = await deps.accounts.session(cookie);
    if (!session || !cookie) throw new UnauthorizedError('not_signed_in', 'sign in to the dashboard first');
    if (!['GET', 'HEAD'].includes(ctx.method)) {
      const sent = Buffer.from(ctx.get('x-csrf-token'));
      const expected = Buffer.from(session.csrf);
      if (sent.length !== expected.length || !crypto.timingSafeEqual(sent, expected)) {
        throw new ForbiddenError('csrf_mismatch', 'send the csrf_token of GET /api/dashboard/session in the X-CSRF-Token header');
      }
    }
    ctx.state.web = session;
    ctx.state.webToken = cookie;
    await next();
  };
}

export function dashboardSessionRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/dashboard' });
  /**
   * A Secure cookie (COOKIE_SECURE) goes only over TLS: directly, or through a proxy of TRUST_PROXY that says so in
   * X-Forwarded-Proto. Over plain HTTP the sign-in is refused before the password is looked at.
   */
  const requireTls = (ctx: Context) => {
    if (deps.config.cookieSecure && !ctx.secure) {
      throw new ForbiddenError('tls_required', 'COOKIE_SECURE is on: sign in over HTTPS (behind a TLS proxy, list it in TRUST_PROXY so its X-Forwarded-Proto is believed)');
    }
  };
  const setCookie = (ctx: Context, value: string | null) => {
    requireTls(ctx);
    ctx.cookies.set(SESSION_COOKIE, value, {
      httpOnly: true,
      sameSite: 'lax',
      secure: deps.config.cookieSecure,
      path: '/',
      maxAge: value ? SESSION_SECONDS * 1000 : 0,
      overwrite: true,
    });
  };

  router.post('/session', async (ctx) => {
    requireTls(ctx);
    const body = deps.validator.check<{ email: string; password: string }>('sign-in', await readJson(ctx, deps.config.bodyLimitBytes));
    const { token, session } = await deps.accounts.signIn(body.email, body.password, ctx.ip);
    setCookie(ctx, token);
    ctx.body = sessionView(session);
  });

  router.get('/session', requireSignedIn(deps), async (ctx) => {
    ctx.body = sessionView(ctx.state.web);
  });

  router.delete('/session', requireSignedIn(deps), async (ctx) => {
    await deps.accounts.signOut(ctx.state.webToken);
    setCookie(ctx, null);
    ctx.status = 204;
  });

  router.post('/password', async (ctx) => {
    const body = deps.validator.check<{ token: string; password: string }>('set-password', await readJson(ctx, deps.config.bodyLimitBytes));
    ctx.body = await deps.accounts.setPassword(body.token, body.password);
  });
  return router;
}
