/** POST /sdk/activate, GET /sdk/config, PUT /sdk/contacts (spec 4.1–4.3); GET /sdk/decisions (issue 24). */
import Router from '@koa/router';
import type { ActivateBody, ContactsBody } from '../../services/sdk.service.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { readJson } from '../body.ts';
import { requireSecretKey } from '../middleware/auth.middleware.ts';

export function sdkRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1/sdk' });
  const { validator, sdk, resolver, config, decisions } = deps;

  // Activation is how an installation binds, so it cannot require the instance header.
  router.post('/activate', requireSecretKey(resolver, { instance: false }), async (ctx) => {
    const body = validator.check<ActivateBody>('activate', await readJson(ctx, config.bodyLimitBytes));
    ctx.body = await sdk.activate(ctx.state.project, body, new Date());
  });

  router.get('/config', requireSecretKey(resolver, { instance: true }), async (ctx) => {
    ctx.body = await sdk.config(ctx.state.project);
  });

  router.put('/contacts', requireSecretKey(resolver, { instance: true }), async (ctx) => {
    const body = validator.check<ContactsBody>('contacts', await readJson(ctx, config.bodyLimitBytes));
    ctx.body = await sdk.putContacts(ctx.state.project, body, new Date());
  });

  // The decisions feed, for the installation that reports the attempts: keys and instance as on config.
  router.get('/decisions', requireSecretKey(resolver, { instance: true }), async (ctx) => {
    const since = typeof ctx.query.since === 'string' ? ctx.query.since : undefined;
    ctx.body = await decisions.feed(ctx.state.project._id, since, new Date());
  });

  return router;
}
