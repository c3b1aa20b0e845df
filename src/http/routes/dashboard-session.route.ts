/**
 * The dashboard's session: sign in (an HttpOnly, SameSite=Lax cookie; Secure
 * with COOKIE_SECURE) with a password and, when enrolled, a second factor, or
 * through the organisation's OpenID provider; read who is signed in with the
 * session's CSRF token; sign out (server-side); set a password with a
 * one-time token. Every state-changing request with the cookie carries the
 * CSRF token in X-CSRF-Token. An API token (`Authorization: Bearer`) stands
 * in for the cookie on the routes its scopes cover.
 */
import Router from '@koa/router';
import crypto from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { AppError, ForbiddenError, UnauthorizedError } from '../../errors.ts';
import { SESSION_SECONDS, type SignedIn } from '../../services/accounts.service.ts';
import { SSO_PENDING_SECONDS } from '../../services/sso.service.ts';
import type { TokenScope } from '../../store/tokens.store.ts';
import { contracted } from '../contract.ts';
import type { AppDeps, AppState } from '../deps.ts';

export const SESSION_COOKIE = 'lookout_session';
const SSO_COOKIE = 'lookout_sso';
const PREFIX = '/api/dashboard';

export type WebState = AppState & { web: SignedIn; webToken: string | null };

function sessionView(session: SignedIn) {
  return { email: session.email, org: String(session.org), role: session.role, csrf_token: session.csrf, setup_2fa: session.setup_2fa };
}

/** The scope an API token needs for a request, or null when no token may make it (accounts, people, tokens). */
export function tokenScope(method: string, path: string): TokenScope | null {
  const read = method === 'GET' || method === 'HEAD';
  if (path === `${PREFIX}/projects` || path.startsWith(`${PREFIX}/projects/`)) return read ? 'project:read' : 'project:write';
  if (read && (path === `${PREFIX}/org` || path.startsWith(`${PREFIX}/org/`))) return 'org:read';
  if (read && path === `${PREFIX}/session`) return 'org:read';
  return null;
}

/**
 * Where a single sign-on started at this address comes back to: the address the browser used (behind a TRUST_PROXY
 * proxy, the one it was sent to). The provider accepts only the redirect URIs registered with it.
 */
export const ssoCallbackUrl = (ctx: Pick<Context, 'protocol' | 'host'>) => `${ctx.protocol}://${ctx.host}${PREFIX}/sso/callback`;

/** What a signed-in user may still do while their organisation requires 2FA they have not turned on. */
const allowedBeforeTwoFactor = (method: string, path: string) => path === `${PREFIX}/session` || path.startsWith(`${PREFIX}/me/2fa`);

/**
 * The signed-in user (a session cookie, or an API token whose scopes cover the request), or a 401; for
 * state-changing methods with a cookie also the CSRF check (403).
 */
export function requireSignedIn(deps: Pick<AppDeps, 'accounts' | 'tokens'>): Middleware<WebState> {
  return async (ctx, next) => {
    const bearer = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'))?.[1];
    if (bearer) {
      const session = await deps.tokens.authenticate(bearer);
      if (!session) throw new UnauthorizedError('invalid_token', 'this API token is unknown, revoked, or its user no longer has access');
      const needed = tokenScope(ctx.method, ctx.path);
      if (!needed) throw new ForbiddenError('token_not_allowed', 'an API token cannot do this; sign in to the dashboard');
      if (!session.scopes.includes(needed)) throw new ForbiddenError('scope_required', `this API token lacks the ${needed} scope`);
      ctx.state.web = session;
      ctx.state.webToken = null;
    } else {
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
    }
    if (ctx.state.web.setup_2fa && !allowedBeforeTwoFactor(ctx.method, ctx.path)) {
      throw new ForbiddenError('two_factor_setup_required', 'your organisation requires two-factor sign-in: turn it on first (Account page)');
    }
    await next();
  };
}

/** Routes a person reaches only with a session cookie: their own account, and managing people. */
export const requireSessionCookie: Middleware<WebState> = async (ctx, next) => {
  if (!ctx.state.webToken) throw new ForbiddenError('token_not_allowed', 'an API token cannot do this; sign in to the dashboard');
  await next();
};

export function dashboardSessionRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<WebState>({ prefix: PREFIX });
  const routes = contracted(router, deps);
  /**
   * A Secure cookie (COOKIE_SECURE) goes only over TLS: directly, or through a proxy of TRUST_PROXY that says so in
   * X-Forwarded-Proto. Over plain HTTP the sign-in is refused before the password is looked at.
   */
  const requireTls = (ctx: Context) => {
    if (deps.config.cookieSecure && !ctx.secure) {
      throw new ForbiddenError(
        'tls_required',
        'COOKIE_SECURE is on: sign in over HTTPS (behind a TLS proxy, list it in TRUST_PROXY so its X-Forwarded-Proto is believed)',
      );
    }
  };
  const cookie = (ctx: Context, name: string, value: string | null, seconds: number, path = '/') => {
    requireTls(ctx);
    ctx.cookies.set(name, value, {
      httpOnly: true,
      sameSite: 'lax',
      secure: deps.config.cookieSecure,
      path,
      maxAge: value ? seconds * 1000 : 0,
      overwrite: true,
    });
  };
  const origin = (ctx: Context) => ({ ip: ctx.ip, userAgent: ctx.get('user-agent') });

  const tlsOnly: Middleware<WebState> = async (ctx, next) => {
    requireTls(ctx);
    await next();
  };

  routes.post(
    '/session',
    {
      tag: 'dashboard',
      summary: 'Sign in to the dashboard: sets the HttpOnly session cookie; throttled per account and per address',
      auth: 'none',
      body: { schema: 'sign-in' },
      ok: { 200: { description: 'who is signed in, with the CSRF token', schema: 'signed-in' } },
      errors: [400, 401, 413, 415, 429],
    },
    tlsOnly,
    async (ctx, { body }) => {
      const { token, session } = await deps.accounts.signIn(body, origin(ctx));
      cookie(ctx, SESSION_COOKIE, token, SESSION_SECONDS);
      ctx.body = sessionView(session);
    },
  );

  routes.get(
    '/session',
    { tag: 'dashboard', summary: 'Who is signed in, with the CSRF token of the session', auth: 'dashboard', ok: { 200: { description: 'who is signed in, with the CSRF token', schema: 'signed-in' } } },
    requireSignedIn(deps),
    async (ctx) => {
      ctx.body = sessionView(ctx.state.web);
    },
  );

  routes.delete(
    '/session',
    { tag: 'dashboard', summary: 'Sign out: the session ends server-side', auth: 'dashboard', ok: { 204: 'signed out; the cookie is cleared' } },
    requireSignedIn(deps),
    requireSessionCookie,
    async (ctx) => {
      await deps.accounts.signOut(ctx.state.webToken!);
      cookie(ctx, SESSION_COOKIE, null, 0);
      ctx.status = 204;
    },
  );

  routes.post(
    '/password',
    {
      tag: 'dashboard',
      summary: 'Set a password with the one-time token of `lookout admin user add` (valid 24 hours)',
      auth: 'none',
      body: { schema: 'set-password' },
      ok: { 200: { description: 'the account whose password was set', schema: 'password-set' } },
      errors: [400, 413, 415],
    },
    async (ctx, { body }) => {
      ctx.body = await deps.accounts.setPassword(body.token, body.password);
    },
  );

  // Single sign-on: the browser goes to the provider with a state its own cookie keeps, and comes back to /callback.
  /** A browser refused goes back to the sign-in page, which says why; a script gets the JSON answer. */
  const orBackToSignIn =
    <I>(run: (ctx: Context, input: I) => Promise<void>) =>
    async (ctx: Context, input: I) => {
      try {
        await run(ctx, input);
      } catch (err) {
        if (!(err instanceof AppError) || ctx.accepts('json', 'html') !== 'html') throw err;
        ctx.redirect(`/sign-in?${new URLSearchParams({ sso_error: err.reason, message: err.message })}`);
      }
    };
  routes.get(
    '/sso/start',
    {
      tag: 'dashboard',
      summary: "Start single sign-on for an email's domain: redirects to the organisation's OpenID provider (PKCE, state kept in a cookie)",
      auth: 'none',
      query: 'sso-start-query',
      ok: { 302: 'to the identity provider' },
      errors: [400, 404],
    },
    orBackToSignIn<{ query: { email?: string } }>(async (ctx, { query }) => {
      requireTls(ctx);
      const { url, state } = await deps.sso.start(query.email ?? '', ssoCallbackUrl(ctx));
      cookie(ctx, SSO_COOKIE, state, SSO_PENDING_SECONDS, `${PREFIX}/sso`);
      ctx.redirect(url);
    }),
  );
  routes.get(
    '/sso/callback',
    {
      tag: 'dashboard',
      summary: "The provider's redirect: state, code (with the PKCE verifier), ID token signature, audience, nonce and email domain checked; opens a session",
      auth: 'none',
      // its query is the provider's answer, read whole by openid-client
      ok: { 302: 'to /projects signed in; a browser refused goes to /sign-in?sso_error=<reason>' },
      errors: [400, 404],
    },
    orBackToSignIn(async (ctx) => {
      const state = ctx.cookies.get(SSO_COOKIE);
      cookie(ctx, SSO_COOKIE, null, 0, `${PREFIX}/sso`);
      const { token } = await deps.sso.finish(new URL(ctx.href), state, origin(ctx));
      cookie(ctx, SESSION_COOKIE, token, SESSION_SECONDS);
      ctx.redirect('/projects');
    }),
  );
  return router as unknown as Router<AppState>;
}
