/**
 * CrowdSec's decisions API for bouncers (issue 49): `GET /v1/decisions/stream` and `GET /v1/decisions`, with a
 * bouncer key in `X-Api-Key` (src/services/bouncers.service.ts). An unknown or revoked key is 403, as CrowdSec's
 * API answers it. Point a bouncer at Lookout with `api_url: <Lookout's URL>/` and `api_key: <the bouncer key>`.
 */
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { ForbiddenError } from '../../errors.ts';
import type { BouncerDoc } from '../../store/bouncers.store.ts';
import { contracted } from '../contract.ts';
import type { AppDeps, AppState } from '../deps.ts';

type BouncerState = AppState & { bouncer: BouncerDoc };

export function crowdsecRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<BouncerState>({ prefix: '/v1/decisions' });
  const routes = contracted(router, deps);
  const bouncerKey: Middleware<BouncerState> = async (ctx, next) => {
    const bouncer = await deps.bouncers.authenticate(ctx.get('x-api-key'));
    if (!bouncer) throw new ForbiddenError('invalid_bouncer_key', 'X-Api-Key is not the key of a bouncer of any project (revoked, or never made)');
    ctx.state.bouncer = bouncer;
    await next();
  };

  routes.get(
    '/stream',
    {
      tag: 'installations',
      summary: "A CrowdSec bouncer's pull: with startup=true every decision in force, then the changes since its previous pull",
      auth: 'bouncer',
      query: 'crowdsec-stream-query',
      ok: { 200: { description: '`{new, deleted}`, each a list or null', schema: 'crowdsec-stream' } },
      errors: [400],
    },
    bouncerKey,
    async (ctx, { query: { startup, ...filters } }) => {
      ctx.type = 'application/json';
      ctx.body = await deps.bouncers.stream(ctx.state.bouncer, startup, filters, { ip: ctx.ip, user_agent: ctx.get('user-agent').slice(0, 200) });
    },
  );
  routes.get(
    '/',
    {
      tag: 'installations',
      summary: "A CrowdSec bouncer's question in live mode: the decisions in force on an address, a range, or a scope and value",
      auth: 'bouncer',
      query: 'crowdsec-live-query',
      ok: { 200: { description: 'the decisions, or null', schema: 'crowdsec-live' } },
      errors: [400],
    },
    bouncerKey,
    async (ctx, { query }) => {
      ctx.type = 'application/json';
      ctx.body = JSON.stringify(await deps.bouncers.live(ctx.state.bouncer.project_id, query));
    },
  );
  return router as unknown as Router<AppState>;
}
