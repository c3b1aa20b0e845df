/** POST /sdk/activate, GET /sdk/config, PUT /sdk/contacts (spec 4.1–4.3); GET /sdk/decisions (issue 24). */
import Router from '@koa/router';
import { contracted } from '../contract.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { requireSecretKey } from '../middleware/auth.middleware.ts';

export function sdkRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1/sdk' });
  const routes = contracted(router, deps);
  const { sdk, resolver, decisions } = deps;

  // Activation is how an installation binds, so it cannot require the instance header.
  routes.post(
    '/activate',
    {
      tag: 'installations',
      summary: 'Bind an installation to the project (spec 4.1)',
      auth: 'secret',
      body: { schema: 'activate' },
      ok: { 200: { description: 'the project bound (spec 2.2)', schema: 'activation' } },
      errors: [400, 409, 413, 415],
    },
    requireSecretKey(resolver, { instance: false }),
    async (ctx, { body }) => {
      ctx.body = await sdk.activate(ctx.state.project, body, new Date());
      ctx.state.installation = body.instance_id; // heard (src/http/app.ts)
    },
  );

  routes.get(
    '/config',
    { tag: 'installations', summary: "The installation's configuration (spec 4.2)", auth: 'secret+instance', ok: { 200: { description: 'configuration (spec 2.3)', schema: 'sdk-config' } } },
    requireSecretKey(resolver, { instance: true }),
    async (ctx) => {
      ctx.body = await sdk.config(ctx.state.project);
    },
  );

  routes.put(
    '/contacts',
    {
      tag: 'installations',
      summary: 'Replace the contacts of the installation (spec 4.3)',
      auth: 'secret+instance',
      body: { schema: 'contacts' },
      ok: { 200: { description: 'the seats used; 409 `{reason: "seats_exceeded", seats, used, plan}` beyond the seats', schema: 'seats-used' } },
      errors: [400, 409, 413, 415],
    },
    requireSecretKey(resolver, { instance: true }),
    async (ctx, { body }) => {
      ctx.body = await sdk.putContacts(ctx.state.project, body, new Date());
    },
  );

  // The decisions feed, for the installation that reports the attempts: keys and instance as on config.
  routes.get(
    '/decisions',
    {
      tag: 'installations',
      summary:
        'Decisions made by sign-in bursts, to act on (block, delay, captcha): every active one, or with `since` only what changed after that cursor (docs/api.md, Decisions)',
      auth: 'secret+instance',
      query: 'decisions-query',
      ok: { 200: { description: 'the decisions that are new or changed, the ids removed and the cursor to poll from', schema: 'decisions-feed' } },
      errors: [400],
    },
    requireSecretKey(resolver, { instance: true }),
    async (ctx, { query }) => {
      ctx.body = await decisions.feed(ctx.state.project._id, query.since, new Date());
    },
  );

  return router;
}
