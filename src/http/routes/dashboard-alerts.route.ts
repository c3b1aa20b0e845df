/**
 * The dashboard's alert routes: sign-in burst settings and their preview, notification channels (an owner manages
 * them; a member sees them) and their deliveries.
 */
import type { AlertsChange } from '../../store/projects.store.ts';
import { readJson } from '../body.ts';
import { channelNotFound, PARAMS, readId } from '../params.ts';
import { ownerOnly } from './dashboard-account.route.ts';
import type { DashboardScope, WebContext } from './dashboard-scope.ts';

export function mountAlertRoutes({ routes, deps, projectId }: DashboardScope): void {
  const { admin } = deps;
  // The admin service checks alert settings against schemas/alerts.json, for the CLI and here alike (checkedBy).
  const alerts = async (ctx: WebContext) => (await readJson(ctx, deps.config.bodyLimitBytes)) as AlertsChange;
  routes.put(
    '/projects/:project/alerts',
    {
      tag: 'dashboard',
      summary: 'Set the sign-in burst detection settings',
      auth: 'dashboard',
      params: [PARAMS.project],
      body: { schema: 'alerts', checkedBy: 'AdminService' },
      ok: { 200: { description: 'the project', schema: 'project' } },
      errors: [400, 404, 413, 415],
    },
    async (ctx) => {
      const id = await projectId(ctx);
      ctx.body = await admin.setAlerts(id, await alerts(ctx));
    },
  );
  routes.post(
    '/projects/:project/alerts/preview',
    {
      tag: 'dashboard',
      summary: 'What these settings would have raised from the last 24 hours of sign-in attempts, beside the current settings; changes nothing',
      auth: 'dashboard',
      params: [PARAMS.project],
      body: { schema: 'alerts', checkedBy: 'AdminService' },
      ok: { 200: { description: 'what the current and the proposed settings would have raised', schema: 'alerts-preview' } },
      errors: [400, 404, 413, 415],
    },
    async (ctx) => {
      const id = await projectId(ctx);
      ctx.body = await admin.previewAlerts(id, await alerts(ctx), new Date());
    },
  );

  // Notification channels: an owner manages them; a member sees them (a webhook by its origin only) and their deliveries.
  routes.get(
    '/projects/:project/channels',
    {
      tag: 'dashboard',
      summary: "The project's notification channels, never a secret; a member sees a webhook by its origin only (docs/api.md, Notifications)",
      auth: 'dashboard',
      params: [PARAMS.project],
      ok: { 200: { description: 'the channels', schema: 'channel-list' } },
      errors: [404],
    },
    async (ctx) => {
      ctx.body = await deps.notifications.list(await projectId(ctx), { fullUrl: ctx.state.web.role === 'owner' });
    },
  );
  routes.post(
    '/projects/:project/channels',
    {
      tag: 'dashboard',
      summary: 'Add a notification channel (owner); a webhook target must have a public address unless WEBHOOK_ALLOW_PRIVATE=true',
      auth: 'dashboard',
      params: [PARAMS.project],
      body: { schema: 'channel', checkedBy: 'NotifyService.add' },
      ok: { 201: { description: 'the channel with its signing `secret`, shown only here', schema: 'channel-added' } },
      errors: [400, 404, 413, 415, 422],
    },
    ownerOnly,
    async (ctx) => {
      const id = await projectId(ctx);
      const added = await deps.notifications.add(id, await readJson(ctx, deps.config.bodyLimitBytes));
      ctx.status = 201;
      ctx.body = added;
    },
  );
  routes.delete(
    '/projects/:project/channels/:channel',
    {
      tag: 'dashboard',
      summary: 'Remove a channel (owner); its queued deliveries are dropped',
      auth: 'dashboard',
      params: [PARAMS.project, PARAMS.channel],
      ok: { 200: { description: 'what was removed', schema: 'removed' } },
      errors: [404],
    },
    ownerOnly,
    async (ctx, { params }) => {
      ctx.body = await deps.notifications.remove(await projectId(ctx), params.channel);
    },
  );
  routes.post(
    '/projects/:project/channels/:channel/test',
    {
      tag: 'dashboard',
      summary: 'Send a `test` notification through the queue (owner)',
      auth: 'dashboard',
      params: [PARAMS.project, PARAMS.channel],
      ok: { 200: { description: 'the test delivery queued', schema: 'delivery-queued' } },
      errors: [404],
    },
    ownerOnly,
    async (ctx, { params }) => {
      ctx.body = await deps.notifications.test(await projectId(ctx), params.channel);
    },
  );
  routes.post(
    '/projects/:project/channels/:channel/resume',
    {
      tag: 'dashboard',
      summary: 'Resume a channel paused after ten failed deliveries in a row (owner)',
      auth: 'dashboard',
      params: [PARAMS.project, PARAMS.channel],
      ok: { 200: { description: 'the channel', schema: 'channel' } },
      errors: [404],
    },
    ownerOnly,
    async (ctx, { params }) => {
      ctx.body = await deps.notifications.resume(await projectId(ctx), params.channel);
    },
  );
  routes.post(
    '/projects/:project/channels/:channel/secret',
    {
      tag: 'dashboard',
      summary: 'A new signing secret for a webhook channel (owner), shown only here',
      auth: 'dashboard',
      params: [PARAMS.project, PARAMS.channel],
      ok: { 200: { description: 'the new secret, shown only here', schema: 'channel-secret' } },
      errors: [400, 404],
    },
    ownerOnly,
    async (ctx, { params }) => {
      ctx.body = await deps.notifications.rotateSecret(await projectId(ctx), params.channel);
    },
  );
  routes.get(
    '/projects/:project/deliveries',
    {
      tag: 'dashboard',
      summary: "The project's newest notification deliveries, each with its attempts",
      auth: 'dashboard',
      params: [PARAMS.project],
      query: 'deliveries-query',
      ok: { 200: { description: 'the deliveries, newest first', schema: 'delivery-list' } },
      errors: [404],
    },
    async (ctx, { query }) => {
      const id = await projectId(ctx);
      const channel = query.channel === undefined ? undefined : readId(query.channel, channelNotFound);
      ctx.body = await deps.notifications.deliveries(id, { channel });
    },
  );
}
