/**
 * Sentry's check-in endpoint for cron monitors (issue 68), as Relay serves it: `GET` or `POST
 * /api/<project>/cron/<slug>/[<public key>/]`, the key in the path or as a DSN's (`?sentry_key=`, `X-Sentry-Auth`);
 * a JSON body (which may carry `monitor_config`) when the request says `application/json`, else the query's
 * `status`, `check_in_id`, `environment` and `duration`. Answered 202, as Relay does, also when the monitor sent
 * more than it may a minute (counted as dropped); a check-in that cannot be used is a 400 naming its field.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { ForbiddenError, UnauthorizedError } from '../../errors.ts';
import { parseJson } from '../../util/json.ts';
import { clientGone, readBytes } from '../body.ts';
import { contracted, type Contract } from '../contract.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { authenticate, sentryKey } from '../middleware/auth.middleware.ts';
import { PARAMS, textParam } from '../params.ts';

const SLUG = textParam('slug', "the monitor's slug (made one as Sentry makes it: `Nightly Backup` is `nightly-backup`)");
const KEY = textParam('key', "the project's public key (the DSN's), when not sent as a DSN's");

export function cronRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api' });
  const routes = contracted(router, deps);

  const checkIn = async (ctx: Context & { state: AppState }, params: { project: number; slug: string; key?: string }) => {
    const key = params.key ?? sentryKey(ctx);
    if (!key) throw new UnauthorizedError('missing_key', 'send the public key in the path (/api/<project>/cron/<slug>/<key>/), as ?sentry_key= or in X-Sentry-Auth');
    const resolved = await authenticate(deps.resolver, key, 'public');
    if (resolved.project._id !== params.project) throw new ForbiddenError('project_mismatch', 'the key belongs to another project than the one in the path');
    const input = ctx.is('application/json')
      ? { body: parseJson((await readBytes(ctx, deps.config.bodyLimitBytes)).toString('utf8'), 'the body', false), slug: params.slug }
      : { query: ctx.query as Record<string, unknown>, slug: params.slug };
    await deps.checkIns.accept(resolved.project, input, { now: new Date(), gone: clientGone(ctx) });
    ctx.status = 202;
    ctx.body = {};
  };

  const contract = (method: string, withKey: boolean): Contract => ({
    tag: 'events',
    summary: `A cron monitor's check-in (Sentry's cron endpoint), ${method === 'GET' ? 'from the query' : 'from a JSON body or the query'}${withKey ? ', the public key in the path' : ''}`,
    auth: withKey ? 'none' : 'sentry',
    params: withKey ? [PARAMS.dsnProject, SLUG, KEY] : [PARAMS.dsnProject, SLUG],
    ok: { 202: { description: 'taken (also when the monitor sent more than 6 this minute: those are counted as dropped)', schema: 'check-in-accepted' } },
    errors: [400, 401, 403, 413],
  });
  for (const withKey of [false, true]) {
    const path = withKey ? '/:project/cron/:slug/:key/' : '/:project/cron/:slug/';
    routes.get(path, contract('GET', withKey), (ctx, { params }) => checkIn(ctx, params as { project: number; slug: string; key?: string }));
    routes.post(path, contract('POST', withKey), (ctx, { params }) => checkIn(ctx, params as { project: number; slug: string; key?: string }));
  }
  return router;
}
