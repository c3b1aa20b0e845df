/**
 * Heartbeats for jobs no Sentry SDK runs in (issue 68), as healthchecks.io's ping URLs: `GET`, `POST` or `HEAD
 * /ping/<public key>/<slug>[/start|/fail|/log|/<exit status>][?rid=<uuid>]`, so a crontab line needs only curl:
 * `backup.sh; curl -fsS -m 10 --retry 5 https://lookout.example/ping/<key>/backup/$?`. Each ping is a check-in of
 * the monitor `<slug>` (src/domain/checkins.ts' readPing), made on first sight; its schedule (a period and a grace,
 * or a crontab in a time zone) is set from the dashboard or `lookout admin monitor add`. Answered 200 `{}`; a body
 * is not kept.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { clientGone } from '../body.ts';
import { contracted, type Contract } from '../contract.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { authenticate } from '../middleware/auth.middleware.ts';
import { textParam } from '../params.ts';

const KEY = textParam('key', "the project's public key (the DSN's)");
const SLUG = textParam('slug', "the monitor's slug (made one as Sentry makes it: `Nightly Backup` is `nightly-backup`)");
const SIGNAL = textParam('signal', '`start`, `fail`, `log`, or the job\'s exit status (0: ok, 1–255: failed)');

export function pingRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>();
  const routes = contracted(router, deps);

  const ping = async (ctx: Context & { state: AppState }, params: { key: string; slug: string; signal?: string }) => {
    const resolved = await authenticate(deps.resolver, params.key, 'public');
    await deps.checkIns.accept(resolved.project, { signal: params.signal ?? '', query: ctx.query as Record<string, unknown>, slug: params.slug }, { now: new Date(), gone: clientGone(ctx) });
    ctx.status = 200;
    ctx.body = {};
  };
  const contract = (method: string, signal: boolean): Contract => ({
    tag: 'events',
    summary: `A heartbeat's ping (healthchecks.io's URLs), ${method === 'GET' ? 'GET or HEAD' : method}${signal ? ': a run began (start), failed (fail or a status 1–255), ended ok (0), or a note (log)' : ': a run ended ok'}`,
    auth: 'none',
    params: signal ? [KEY, SLUG, SIGNAL] : [KEY, SLUG],
    ok: { 200: { description: 'taken (also when the monitor sent more than 6 this minute: those are counted as dropped)', schema: 'check-in-accepted' } },
    errors: [400, 401],
  });
  for (const signal of [false, true]) {
    const path = signal ? '/ping/:key/:slug/:signal' : '/ping/:key/:slug';
    // koa-router answers HEAD with the GET route
    for (const method of ['get', 'post'] as const) {
      routes[method](path, contract(method.toUpperCase(), signal), (ctx, { params }) => ping(ctx, params as { key: string; slug: string; signal?: string }));
    }
  }
  return router;
}
