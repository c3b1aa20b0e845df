/**
 * The web dashboard's JSON API, for a signed-in user of an organisation
 * (src/http/routes/dashboard-session.route.ts). Every project is looked up
 * within the user's organisation, so another organisation's ids answer 404.
 * A member reads everything, changes issue status and alerts; keys,
 * bindings, project switches, plan and people are the owners' (403).
 * Each route calls the same services as the admin CLI and the v1 API.
 */
import Router, { type RouterContext } from '@koa/router';
import { ConflictError } from '../../errors.ts';
import type { PersonList } from '../../store/orgs.store.ts';
import { contracted, paramsOf } from '../contract.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { enumParam, PARAMS, textParam } from '../params.ts';
import { ownerOnly } from './dashboard-account.route.ts';
import { requireSignedIn, type WebState } from './dashboard-session.route.ts';
import { mountAlertRoutes } from './dashboard-alerts.route.ts';
import type { DashboardScope } from './dashboard-scope.ts';
import { mountSecurityRoutes } from './dashboard-security.route.ts';
import { mountTriageRoutes } from './dashboard-triage.route.ts';
import { mountMonitorRoutes } from './dashboard-monitors.route.ts';
import { mountPerformanceReads } from './performance-reads.ts';
import { mountIngestionRead, type WayIn } from './project-reads.ts';

type WebContext = RouterContext<WebState>;


export function dashboardRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<WebState>({ prefix: '/api/dashboard' });
  const routes = contracted(router, deps);
  const { admin } = deps;
  router.use(['/projects', '/org'], requireSignedIn(deps));
  /** The project of the path (PARAMS.project, read by the route's contract), checked to be in the user's organisation. */
  const project = (ctx: WebContext) => admin.projectOf(ctx.state.web.org, paramsOf(ctx).project as number);
  const projectId = async (ctx: WebContext) => Number((await project(ctx)).id);
  /** The reads shared with the key API (./project-reads.ts) find the project by the path. */
  const way: WayIn = {
    auth: 'dashboard',
    params: [PARAMS.project],
    projectOf: (ctx) => projectId(ctx as WebContext),
    who: (ctx) => (ctx as WebContext).state.web.email,
  };

  routes.get('/projects', { tag: 'dashboard', summary: "The organisation's projects", auth: 'dashboard', ok: { 200: { description: 'the projects', schema: 'project-list' } } }, async (ctx) => {
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
      ok: { 201: { description: 'the project with its keys', schema: 'project-created' } },
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
      ok: { 200: { description: 'the new key', schema: 'key-rotated' } },
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
      ok: { 200: { description: 'the instance it was bound to', schema: 'unbound' } },
      errors: [404],
    },
    ownerOnly,
    async (ctx) => {
      ctx.body = await admin.unbind(await projectId(ctx));
    },
  );

  const scope: DashboardScope = { router, routes, deps, projectId, way };
  mountAlertRoutes(scope);

  mountIngestionRead(router, deps, '/projects/:project/ingestion', way);

  mountSecurityRoutes(scope);
  mountTriageRoutes(scope);
  mountMonitorRoutes(scope);
  mountPerformanceReads(router, deps, '/projects/:project', way);

  routes.get(
    '/org',
    {
      tag: 'dashboard',
      summary: "The user's organisation: plan, seats, `usage` (used and each list's size), people lists and dashboard users",
      auth: 'dashboard',
      ok: { 200: { description: "the organisation, each list's size and the dashboard users", schema: 'organisation-page' } },
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
      ok: { 200: { description: 'the organisation', schema: 'organisation' } },
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
      ok: { 200: { description: 'the organisation', schema: 'organisation' } },
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
      params: [enumParam<'list', PersonList>('list', 'members, invites or email_rules', ['members', 'invites', 'email_rules']), textParam('email', 'the address')],
      ok: { 200: { description: 'the organisation', schema: 'organisation' } },
      errors: [400],
    },
    ownerOnly,
    async (ctx, { params: { list, email } }) => {
      if (list === 'members' && email.trim().toLowerCase() === ctx.state.web.email) {
        throw new ConflictError('cannot_remove_self', 'an owner cannot remove themselves; another owner can');
      }
      ctx.body = await admin.person(ctx.state.web.org, list, 'remove', email);
      // a member removed is offboarded: their account and sessions end now
      if (list === 'members') await deps.accounts.removeUser(ctx.state.web.org, email);
    },
  );
  return router as unknown as Router<AppState>;
}
