/**
 * The dashboard's triage routes: source map bundles, releases and their issues, and the issue routes only people
 * have (bulk changes, assignment, comments, activity, attachments); the reads the key API shares are mounted from
 * ./project-reads.ts.
 */
import { NotFoundError } from '../../errors.ts';
import { PARAMS, textParam, type PathParam } from '../params.ts';
import { mountIssueRoutes, mountReleaseList } from './project-reads.ts';
import type { DashboardScope, WebContext } from './dashboard-scope.ts';

/** The chart ranges of a release page. */
export const CHART_RANGES = { '24h': 24, '7d': 7 * 24, '14d': 14 * 24, '90d': 90 * 24 } as const;

const attachmentNotFound = () => new NotFoundError('attachment_not_found', 'no such attachment on this event');

/** An attachment's slot on its event: up to two digits; anything else names nothing. */
const SLOT: PathParam<'slot', number> = {
  name: 'slot',
  in: 'path',
  description: "the attachment's slot, as the event lists it",
  schema: { type: 'integer', minimum: 0 },
  read: (value) => {
    if (!/^\d{1,2}$/.test(value)) throw attachmentNotFound();
    return Number(value);
  },
};
const BUNDLE = textParam('bundle', "a source map bundle's id (from the bundles list)", { type: 'string', maxLength: 64 });

export function mountTriageRoutes({ router, routes, deps, projectId, way }: DashboardScope): void {
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
    { tag: 'dashboard', summary: 'Delete a source map bundle: events that arrive later are no longer mapped by it', auth: 'dashboard', params: [PARAMS.project, BUNDLE], ok: { 200: { description: 'what was deleted', schema: 'deleted' } }, errors: [404] },
    async (ctx, { params }) => {
      ctx.body = await deps.sourcemaps.remove(await projectId(ctx), params.bundle);
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
    async (ctx, { params, query: { environment, range } }) => {
      const id = await projectId(ctx);
      const now = new Date();
      const since = new Date(now.getTime() - CHART_RANGES[range] * 3600_000);
      const release = await deps.releases.get(id, params.release, environment, now, since);
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
    async (ctx, { params }) => {
      ctx.body = await deps.issues.ofRelease(await projectId(ctx), params.release);
    },
  );

  routes.get(
    '/projects/:project/releases/:release/deploys',
    {
      tag: 'dashboard',
      summary: "A release's deploys, newest first (recorded by `sentry-cli deploys new`)",
      auth: 'dashboard',
      params: [PARAMS.project, PARAMS.release],
      ok: { 200: { description: 'the deploys', schema: 'release-deploys' } },
      errors: [404],
    },
    async (ctx, { params }) => {
      ctx.body = { deploys: await deps.sentryApi.deploysOf(await projectId(ctx), params.release) };
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
      ok: { 200: { description: 'how many changed, and the ids not found', schema: 'issues-changed' } },
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
      ok: { 200: { description: 'the assignee', schema: 'issue-assigned' } },
      errors: [400, 404, 413, 415],
    },
    async (ctx, { params, body }) => {
      const id = await projectId(ctx);
      ctx.body = await deps.issues.assign(id, params.id, await assignee(ctx, body.assignee), ctx.state.web.email, new Date());
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
    async (ctx, { params, body }) => {
      const id = await projectId(ctx);
      ctx.status = 201;
      ctx.body = await deps.issues.comment(id, params.id, body.text, ctx.state.web.email, new Date());
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
    async (ctx, { params }) => {
      ctx.body = await deps.issues.activity(await projectId(ctx), params.id);
    },
  );
  // An attachment's bytes, never served as what the SDK said they are: a file named page.html stays a download.
  routes.get(
    '/projects/:project/issues/:id/events/:event/attachments/:slot',
    {
      tag: 'dashboard',
      summary: "An event's attachment, downloaded (always application/octet-stream, never shown inline)",
      auth: 'dashboard',
      params: [PARAMS.project, PARAMS.issue, PARAMS.event, SLOT],
      ok: { 200: { description: 'the bytes, as Content-Disposition: attachment', media: 'application/octet-stream' } },
      errors: [404],
    },
    async (ctx, { params }) => {
      const file = await deps.issues.attachment(await projectId(ctx), params.id, params.event, params.slot);
      if (!file.data) throw new NotFoundError('attachment_not_kept', `${file.filename} was over the event's attachment cap and was not kept`);
      ctx.set('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(file.filename)}`);
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
      ctx.type = 'application/octet-stream';
      ctx.body = file.data;
    },
  );
}
