/**
 * The dashboard's security routes: decisions in force and lifted, an issue's decisions, and the project's CrowdSec
 * bouncers (an owner registers and revokes them).
 */
import { PARAMS, textParam } from '../params.ts';
import { ownerOnly } from './dashboard-account.route.ts';
import type { DashboardScope } from './dashboard-scope.ts';

export function mountSecurityRoutes({ routes, deps, projectId }: DashboardScope): void {
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
      params: [PARAMS.project, textParam('decision', 'decision id', { type: 'string', pattern: '^d\\d+$' })],
      ok: { 200: { description: 'the decision lifted', schema: 'lifted' } },
      errors: [404],
    },
    ownerOnly,
    async (ctx, { params }) => {
      ctx.body = await deps.decisions.lift(await projectId(ctx), params.decision, new Date());
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
    async (ctx, { params: { id: issue } }) => {
      const id = await projectId(ctx);
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
      ok: { 200: { description: 'what was revoked', schema: 'revoked' } },
      errors: [404],
    },
    ownerOnly,
    async (ctx, { params }) => {
      ctx.body = await deps.bouncers.revoke(await projectId(ctx), params.bouncer);
    },
  );
}
