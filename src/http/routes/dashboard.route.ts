/**
 * The web dashboard's JSON API, for a signed-in user of an organisation
 * (src/http/routes/dashboard-session.route.ts). Every project is looked up
 * within the user's organisation, so another organisation's ids answer 404.
 * A member reads everything, changes issue status and alerts; keys,
 * bindings, project switches, plan and people are the owners' (403).
 * Each route calls the same services as the admin CLI and the v1 API.
 */
import Router, { type RouterContext } from '@koa/router';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { AlertsChange } from '../../store/projects.store.ts';
import type { PersonList } from '../../store/orgs.store.ts';
import { contracted, PARAMS } from '../contract.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { readJson } from '../body.ts';
import { enumParam, idParam, releaseParam } from '../params.ts';
import { ownerOnly } from './dashboard-account.route.ts';
import { requireSignedIn, type WebState } from './dashboard-session.route.ts';
import { eventIdParam, issueNotFound, mountIngestionRead, mountIssueRoutes, mountReleaseList, type WayIn } from './project-reads.ts';

type WebContext = RouterContext<WebState>;

/** The chart ranges of a release page. */
export const CHART_RANGES = { '24h': 24, '7d': 7 * 24, '14d': 14 * 24, '90d': 90 * 24 } as const;

const projectNotFound = () => new NotFoundError('project_not_found', 'no such project in your organisation');
const attachmentNotFound = () => new NotFoundError('attachment_not_found', 'no such attachment on this event');

export function dashboardRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<WebState>({ prefix: '/api/dashboard' });
  const routes = contracted(router, deps);
  const { admin } = deps;
  router.use(['/projects', '/org'], requireSignedIn(deps));
  /** The project of the path, checked to be in the user's organisation. */
  const project = (ctx: WebContext) => admin.projectOf(ctx.state.web.org, idParam(ctx.params.project, projectNotFound));
  const projectId = async (ctx: WebContext) => Number((await project(ctx)).id);
  /** The reads shared with the key API (./project-reads.ts) find the project by the path. */
  const way: WayIn = {
    auth: 'dashboard',
    params: [PARAMS.project],
    projectOf: (ctx) => projectId(ctx as WebContext),
    who: (ctx) => (ctx as WebContext).state.web.email,
  };

  routes.get('/projects', { tag: 'dashboard', summary: "The organisation's projects", auth: 'dashboard', ok: { 200: '`{projects}`' } }, async (ctx) => {
    ctx.body = { projects: await admin.listProjects(ctx.state.web.org) };
  });
  routes.get(
    '/projects/health',
    {
      tag: 'dashboard',
      summary: "Each project's health at a glance: open issues, events in the last 24 hours, and its newest release's crash-free rates",
      auth: 'dashboard',
      ok: { 200: { description: 'one entry per project', schema: 'projects-health' } },
    },
    async (ctx) => {
      const projects = await admin.listProjects(ctx.state.web.org);
      const now = new Date();
      ctx.body = {
        projects: await Promise.all(
          projects.map(async (p) => {
            const id = Number(p.id);
            const [open, ingest, releases] = await Promise.all([deps.issues.openCount(id, now), deps.ingestStats.read(id, 24, now), deps.releases.list(id, undefined, now)]);
            const newest = releases.releases.reduce<(typeof releases.releases)[number] | null>((a, r) => (a === null || r.first_seen > a.first_seen ? r : a), null);
            return {
              id: p.id,
              open_issues: open,
              events_24h: ingest.accepted.event ?? 0,
              newest_release: newest && {
                release: newest.release,
                environment: newest.environment,
                crash_free_sessions: newest.crash_free_sessions,
                crash_free_users: newest.crash_free_users,
              },
            };
          }),
        ),
      };
    },
  );
  routes.post(
    '/projects',
    {
      tag: 'dashboard',
      summary: 'Create a project (owner); the secret key is shown in this answer only',
      auth: 'dashboard',
      body: { schema: 'project-create' },
      ok: { 201: '`{id, org, name, public_key, secret_key}`' },
      errors: [400, 413, 415],
    },
    ownerOnly,
    async (ctx, { body: input }) => {
      ctx.status = 201;
      ctx.body = await admin.createProject({ org: ctx.state.web.org, name: input.name, securityMonitoring: input.security_monitoring ?? true });
    },
  );
  routes.get(
    '/projects/:project',
    {
      tag: 'dashboard',
      summary: 'A project with its binding (never a secret)',
      auth: 'dashboard',
      params: [PARAMS.project],
      ok: { 200: { description: 'the project', schema: 'project' } },
      errors: [404],
    },
    async (ctx) => {
      ctx.body = await project(ctx);
    },
  );
  routes.patch(
    '/projects/:project',
    {
      tag: 'dashboard',
      summary: 'Rename, enable or disable a project, or switch security monitoring (owner)',
      auth: 'dashboard',
      params: [PARAMS.project],
      body: { schema: 'project-settings' },
      ok: { 200: { description: 'the project', schema: 'project' } },
      errors: [400, 404, 413, 415],
    },
    ownerOnly,
    async (ctx, { body }) => {
      ctx.body = await admin.setProject(await projectId(ctx), body);
    },
  );
  routes.post(
    '/projects/:project/keys',
    {
      tag: 'dashboard',
      summary: 'Rotate the secret or the public key (owner); the old key stops working in every API process before the answer',
      auth: 'dashboard',
      params: [PARAMS.project],
      body: { schema: 'key-rotate' },
      ok: { 200: '`{id, secret_key}` or `{id, public_key}`' },
      errors: [400, 404, 413, 415],
    },
    ownerOnly,
    async (ctx, { body }) => {
      ctx.body = await admin.rotateKey(await projectId(ctx), body.kind);
    },
  );
  routes.post(
    '/projects/:project/unbind',
    {
      tag: 'dashboard',
      summary: 'Unbind the installation (owner): the project and the installation may be activated again at once',
      auth: 'dashboard',
      params: [PARAMS.project],
      ok: { 200: '`{id, unbound}`' },
      errors: [404],
    },
    ownerOnly,
    async (ctx) => {
      ctx.body = await admin.unbind(await projectId(ctx));
    },
  );
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
      ok: { 200: '`{since, until, attempts, current: {settings, brute_force, credential_stuffing}, proposed: {…}}`' },
      errors: [400, 404, 413, 415],
    },
    async (ctx) => {
      const id = await projectId(ctx);
      ctx.body = await admin.previewAlerts(id, await alerts(ctx), new Date());
    },
  );

  // Notification channels: an owner manages them; a member sees them (a webhook by its origin only) and their deliveries.
  const channelNotFound = () => new NotFoundError('channel_not_found', 'no such channel in this project');
  const channelId = (ctx: WebContext) => idParam(ctx.params.channel, channelNotFound);
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
      ok: { 201: 'the channel with its signing `secret`, shown only here' },
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
      ok: { 200: '`{removed}`' },
      errors: [404],
    },
    ownerOnly,
    async (ctx) => {
      ctx.body = await deps.notifications.remove(await projectId(ctx), channelId(ctx));
    },
  );
  routes.post(
    '/projects/:project/channels/:channel/test',
    {
      tag: 'dashboard',
      summary: 'Send a `test` notification through the queue (owner)',
      auth: 'dashboard',
      params: [PARAMS.project, PARAMS.channel],
      ok: { 200: '`{delivery, channel, status}`' },
      errors: [404],
    },
    ownerOnly,
    async (ctx) => {
      ctx.body = await deps.notifications.test(await projectId(ctx), channelId(ctx));
    },
  );
  routes.post(
    '/projects/:project/channels/:channel/resume',
    {
      tag: 'dashboard',
      summary: 'Resume a channel paused after ten failed deliveries in a row (owner)',
      auth: 'dashboard',
      params: [PARAMS.project, PARAMS.channel],
      ok: { 200: 'the channel' },
      errors: [404],
    },
    ownerOnly,
    async (ctx) => {
      ctx.body = await deps.notifications.resume(await projectId(ctx), channelId(ctx));
    },
  );
  routes.post(
    '/projects/:project/channels/:channel/secret',
    {
      tag: 'dashboard',
      summary: 'A new signing secret for a webhook channel (owner), shown only here',
      auth: 'dashboard',
      params: [PARAMS.project, PARAMS.channel],
      ok: { 200: '`{id, secret}`' },
      errors: [400, 404],
    },
    ownerOnly,
    async (ctx) => {
      ctx.body = await deps.notifications.rotateSecret(await projectId(ctx), channelId(ctx));
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
      const channel = query.channel === undefined ? undefined : idParam(query.channel, channelNotFound);
      ctx.body = await deps.notifications.deliveries(id, { channel });
    },
  );

  mountIngestionRead(router, deps, '/projects/:project/ingestion', way);

  routes.get(
    '/projects/:project/decisions',
    {
      tag: 'dashboard',
      summary: "The project's active decisions",
      auth: 'dashboard',
      params: [PARAMS.project],
      ok: { 200: { description: 'the decisions in force', schema: 'decision-list' } },
      errors: [404],
    },
    async (ctx) => {
      ctx.body = await deps.decisions.list(await projectId(ctx), new Date());
    },
  );
  routes.post(
    '/projects/:project/decisions/:decision/lift',
    {
      tag: 'dashboard',
      summary: 'Lift a decision (owner): it ends now, and the installations see it in `removed` at their next poll',
      auth: 'dashboard',
      params: [PARAMS.project, { name: 'decision', in: 'path', description: 'decision id', schema: { type: 'string', pattern: '^d\\d+$' } }],
      ok: { 200: '`{lifted}`' },
      errors: [404],
    },
    ownerOnly,
    async (ctx) => {
      ctx.body = await deps.decisions.lift(await projectId(ctx), ctx.params.decision ?? '', new Date());
    },
  );

  routes.get(
    '/projects/:project/issues/:id/decisions',
    {
      tag: 'dashboard',
      summary: "A security issue's decisions, newest first: the one in force and the last 50 that ended, with when each was made, extended and ended",
      auth: 'dashboard',
      params: [PARAMS.project, PARAMS.issue],
      ok: { 200: { description: 'the decisions', schema: 'issue-decisions' } },
      errors: [404],
    },
    async (ctx) => {
      const [id, issue] = [await projectId(ctx), idParam(ctx.params.id, issueNotFound)];
      await deps.issues.mustExist(id, issue);
      ctx.body = await deps.decisions.ofIssue(id, issue, new Date());
    },
  );

  // CrowdSec bouncers: an owner adds and revokes them; a member sees them and their last pulls.
  routes.get(
    '/projects/:project/bouncers',
    {
      tag: 'dashboard',
      summary: "The project's CrowdSec bouncers, each with its last pull (when, address, User-Agent); never a key",
      auth: 'dashboard',
      params: [PARAMS.project],
      ok: { 200: { description: 'the bouncers, oldest first', schema: 'bouncer-list' } },
      errors: [404],
    },
    async (ctx) => {
      ctx.body = await deps.bouncers.list(await projectId(ctx));
    },
  );
  routes.post(
    '/projects/:project/bouncers',
    {
      tag: 'dashboard',
      summary: "Add a CrowdSec bouncer (owner); its `key` (the bouncer's api_key) is in this answer only",
      auth: 'dashboard',
      params: [PARAMS.project],
      body: { schema: 'bouncer-create' },
      ok: { 201: { description: 'the bouncer with its key', schema: 'bouncer' } },
      errors: [400, 404, 413, 415],
    },
    ownerOnly,
    async (ctx, { body }) => {
      const added = await deps.bouncers.add(await projectId(ctx), body.name);
      ctx.status = 201;
      ctx.body = added;
    },
  );
  routes.delete(
    '/projects/:project/bouncers/:bouncer',
    {
      tag: 'dashboard',
      summary: 'Revoke a bouncer (owner): its next pull is refused (403)',
      auth: 'dashboard',
      params: [PARAMS.project, PARAMS.bouncer],
      ok: { 200: '`{revoked}`' },
      errors: [404],
    },
    ownerOnly,
    async (ctx) => {
      ctx.body = await deps.bouncers.revoke(await projectId(ctx), ctx.params.bouncer ?? '');
    },
  );

  const BUNDLE = { name: 'bundle', in: 'path', description: "a source map bundle's id (from the bundles list)", schema: { type: 'string', maxLength: 64 } } as const;
  routes.get(
    '/projects/:project/sourcemaps',
    {
      tag: 'dashboard',
      summary: 'The source map bundles uploaded for the project (sentry-cli), newest first, with their files',
      auth: 'dashboard',
      params: [PARAMS.project],
      ok: { 200: { description: 'its bundles, their total size and the limit', schema: 'sourcemap-bundles' } },
      errors: [404],
    },
    async (ctx) => {
      ctx.body = await deps.sourcemaps.list(await projectId(ctx));
    },
  );
  routes.delete(
    '/projects/:project/sourcemaps/:bundle',
    { tag: 'dashboard', summary: 'Delete a source map bundle: events that arrive later are no longer mapped by it', auth: 'dashboard', params: [PARAMS.project, BUNDLE], ok: { 200: '`{deleted}`' }, errors: [404] },
    async (ctx) => {
      ctx.body = await deps.sourcemaps.remove(await projectId(ctx), ctx.params.bundle ?? '');
    },
  );

  mountReleaseList(router, deps, '/projects/:project/releases', way);
  routes.get(
    '/projects/:project/releases/:release',
    {
      tag: 'dashboard',
      summary: 'A release with its hourly series over a range: as GET /api/v1/releases/{release}',
      auth: 'dashboard',
      params: [PARAMS.project, PARAMS.release],
      query: 'release-chart-query',
      ok: { 200: { description: 'the release, its hourly `series` over the `range` from `since`', schema: 'release-page' } },
      errors: [400, 404],
    },
    async (ctx, { query: { environment, range } }) => {
      const id = await projectId(ctx);
      const now = new Date();
      const since = new Date(now.getTime() - CHART_RANGES[range] * 3600_000);
      const release = await deps.releases.get(id, releaseParam(ctx.params.release), environment, now, since);
      ctx.body = { ...release, range, since: since.toISOString() };
    },
  );
  routes.get(
    '/projects/:project/releases/:release/issues',
    {
      tag: 'dashboard',
      summary: "A release's new issues (first seen in it) and regressed ones (last regressed in it): the 10 seen last of each, and how many",
      auth: 'dashboard',
      params: [PARAMS.project, PARAMS.release],
      ok: { 200: { description: 'the new and the regressed issues', schema: 'release-issues' } },
      errors: [404],
    },
    async (ctx) => {
      ctx.body = await deps.issues.ofRelease(await projectId(ctx), releaseParam(ctx.params.release));
    },
  );

  /** A member of the organisation to assign to, by email (any case); null for no one. */
  const assignee = async (ctx: WebContext, email: string | null) => (email === null ? null : (await deps.accounts.userOf(ctx.state.web.org, email))._id);
  routes.post(
    '/projects/:project/issues/bulk',
    {
      tag: 'dashboard',
      summary: 'Resolve, ignore, reopen or assign many issues at once (up to 100); ids the project lacks are named in `not_found`',
      auth: 'dashboard',
      params: [PARAMS.project],
      body: { schema: 'issue-bulk' },
      ok: { 200: '`{ok: true, changed, not_found}`' },
      errors: [400, 404, 413, 415],
    },
    async (ctx, { body }) => {
      const id = await projectId(ctx);
      const to = body.assignee === undefined ? undefined : await assignee(ctx, body.assignee);
      ctx.body = await deps.issues.bulk(
        id,
        body.ids.map(Number),
        { ...(body.status && { status: body.status }), ...(to !== undefined && { assignee: to }) },
        ctx.state.web.email,
        new Date(),
      );
    },
  );
  mountIssueRoutes(router, deps, '/projects/:project/issues', way);
  routes.put(
    '/projects/:project/issues/:id/assignee',
    {
      tag: 'dashboard',
      summary: 'Assign an issue to a member of the organisation, or to no one; the project\'s channels on issue.assigned hear of it',
      auth: 'dashboard',
      params: [PARAMS.project, PARAMS.issue],
      body: { schema: 'issue-assign' },
      ok: { 200: '`{ok: true, assignee}`' },
      errors: [400, 404, 413, 415],
    },
    async (ctx, { body }) => {
      const id = await projectId(ctx);
      ctx.body = await deps.issues.assign(id, idParam(ctx.params.id, issueNotFound), await assignee(ctx, body.assignee), ctx.state.web.email, new Date());
    },
  );
  routes.post(
    '/projects/:project/issues/:id/comments',
    {
      tag: 'dashboard',
      summary: 'Comment on an issue, in Markdown (shown as HTML with raw HTML escaped)',
      auth: 'dashboard',
      params: [PARAMS.project, PARAMS.issue],
      body: { schema: 'issue-comment' },
      ok: { 201: { description: 'the comment as the activity shows it', schema: 'activity-entry' } },
      errors: [400, 404, 413, 415],
    },
    async (ctx, { body }) => {
      const id = await projectId(ctx);
      ctx.status = 201;
      ctx.body = await deps.issues.comment(id, idParam(ctx.params.id, issueNotFound), body.text, ctx.state.web.email, new Date());
    },
  );
  routes.get(
    '/projects/:project/issues/:id/activity',
    {
      tag: 'dashboard',
      summary: "An issue's activity, newest first: status changes and who made them, assignments, comments, regressions, notifications sent, its first event",
      auth: 'dashboard',
      params: [PARAMS.project, PARAMS.issue],
      ok: { 200: { description: 'the activity', schema: 'issue-activity' } },
      errors: [404],
    },
    async (ctx) => {
      ctx.body = await deps.issues.activity(await projectId(ctx), idParam(ctx.params.id, issueNotFound));
    },
  );
  // An attachment's bytes, never served as what the SDK said they are: a file named page.html stays a download.
  routes.get(
    '/projects/:project/issues/:id/events/:event/attachments/:slot',
    {
      tag: 'dashboard',
      summary: "An event's attachment, downloaded (always application/octet-stream, never shown inline)",
      auth: 'dashboard',
      params: [
        PARAMS.project,
        PARAMS.issue,
        { name: 'event', in: 'path', description: 'the event id', schema: { type: 'string' } },
        { name: 'slot', in: 'path', description: "the attachment's slot, as the event lists it", schema: { type: 'integer', minimum: 0 } },
      ],
      ok: { 200: 'the bytes, as Content-Disposition: attachment' },
      errors: [404],
    },
    async (ctx) => {
      if (!/^\d{1,2}$/.test(ctx.params.slot ?? '')) throw attachmentNotFound();
      const slot = Number(ctx.params.slot);
      const file = await deps.issues.attachment(await projectId(ctx), idParam(ctx.params.id, issueNotFound), eventIdParam(ctx.params.event), slot);
      if (!file.data) throw new NotFoundError('attachment_not_kept', `${file.filename} was over the event's attachment cap and was not kept`);
      ctx.set('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(file.filename)}`);
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
      ctx.type = 'application/octet-stream';
      ctx.body = file.data;
    },
  );

  routes.get(
    '/org',
    {
      tag: 'dashboard',
      summary: "The user's organisation: plan, seats, `usage` (used and each list's size), people lists and dashboard users",
      auth: 'dashboard',
      ok: { 200: 'organisation' },
    },
    async (ctx) => {
      const org = ctx.state.web.org;
      const [shown, users] = await Promise.all([admin.showOrgUsage(org), deps.accounts.listUsers(org)]);
      ctx.body = { ...shown, users };
    },
  );
  routes.patch(
    '/org',
    {
      tag: 'dashboard',
      summary: 'Rename the organisation or change its plan and seats (owner)',
      auth: 'dashboard',
      body: { schema: 'org-settings' },
      ok: { 200: 'organisation' },
      errors: [400, 413, 415],
    },
    ownerOnly,
    async (ctx, { body }) => {
      ctx.body = await admin.setOrg(ctx.state.web.org, body);
    },
  );
  routes.post(
    '/org/people',
    {
      tag: 'dashboard',
      summary: 'Add a member, an invite or an email rule (owner)',
      auth: 'dashboard',
      body: { schema: 'person' },
      ok: { 200: 'organisation' },
      errors: [400, 413, 415],
    },
    ownerOnly,
    async (ctx, { body: input }) => {
      ctx.body = await admin.person(ctx.state.web.org, input.list, 'add', input.email);
    },
  );
  routes.delete(
    '/org/people/:list/:email',
    {
      tag: 'dashboard',
      summary: 'Remove a member, an invite or an email rule (owner)',
      auth: 'dashboard',
      params: [
        { name: 'list', in: 'path', description: 'members, invites or email_rules', schema: { type: 'string', enum: ['members', 'invites', 'email_rules'] } },
        { name: 'email', in: 'path', description: 'the address', schema: { type: 'string' } },
      ],
      ok: { 200: 'organisation' },
      errors: [400],
    },
    ownerOnly,
    async (ctx) => {
      const list = enumParam<PersonList>(ctx.params.list ?? '', 'list', ['members', 'invites', 'email_rules'])!;
      if (list === 'members' && (ctx.params.email ?? '').trim().toLowerCase() === ctx.state.web.email) {
        throw new ConflictError('cannot_remove_self', 'an owner cannot remove themselves; another owner can');
      }
      ctx.body = await admin.person(ctx.state.web.org, list, 'remove', ctx.params.email ?? '');
      // a member removed is offboarded: their account and sessions end now
      if (list === 'members') await deps.accounts.removeUser(ctx.state.web.org, ctx.params.email ?? '');
    },
  );
  return router as unknown as Router<AppState>;
}
