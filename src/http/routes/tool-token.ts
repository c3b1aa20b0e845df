/**
 * How a tool is let in to Sentry's web API (`/api/0`): an API token (`Authorization: Bearer lkt_…`, the Account page)
 * of a user still in the organisation, holding one of the scopes a route names (none named: any token).
 */
import type { Context } from 'koa';
import { ForbiddenError, UnauthorizedError } from '../../errors.ts';
import type { TokenScope } from '../../store/tokens.store.ts';
import type { AppDeps } from '../deps.ts';
import type { WebState } from './dashboard-session.route.ts';

export const toolToken =
  (deps: Pick<AppDeps, 'tokens'>) =>
  (...scopes: TokenScope[]) =>
  async (ctx: Context & { state: WebState }, next: () => Promise<unknown>) => {
    const bearer = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'))?.[1];
    if (!bearer) throw new UnauthorizedError('missing_token', 'send an API token (Settings → Account) as Authorization: Bearer, or sentry-cli --auth-token');
    const session = await deps.tokens.authenticate(bearer);
    if (!session) throw new UnauthorizedError('invalid_token', 'this API token is unknown, revoked, or its user no longer has access');
    if (scopes.length > 0 && !scopes.some((s) => session.scopes.includes(s))) throw new ForbiddenError('scope_required', `this API token lacks the ${scopes.join(' or ')} scope`);
    ctx.state.web = session;
    ctx.state.webToken = null;
    await next();
  };
