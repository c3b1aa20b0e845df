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
import type { AlertSettings } from '../../store/projects.store.ts';
import type { PersonList } from '../../store/orgs.store.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { readJson } from '../body.ts';
import { enumParam, idParam, releaseParam } from '../params.ts';
import { ownerOnly } from './dashboard-account.route.ts';
import { requireSignedIn, type WebState } from './dashboard-session.route.ts';
import { ingestionRange } from './ingestion.route.ts';
import { releaseQuery } from './releases.route.ts';
import { eventIdParam, issueNotFound, mountIssueRoutes } from './issue-routes.ts';

type WebContext = RouterContext<WebState>;

/** The chart ranges of a release page. */
export const CHART_RANGES = { '24h': 24, '7d': 7 * 24, '14d': 14 * 24, '90d': 90 * 24 } as const;
type ChartRange = keyof typeof CHART_RANGES;

const projectNotFound = () => new NotFoundError('project_not_found', 'no such project in your organisation');
const attachmentNotFound = () => new NotFoundError('attachment_not_found', 'no such attachment on this event');

export function dashboardRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<WebState>({ prefix: '/api/dashboard' });
  const { admin } = deps;
  router.use(['/projects', '/org'], requireSignedIn(deps));
  const body = async <T>(ctx: WebContext, schema: string) => deps.validator.check<T>(schema, await readJson(ctx, deps.config.bodyLimitBytes));
  /** The project of the path, checked to be in the user's organisation. */
  const project = (ctx: WebContext) => admin.projectOf(ctx.state.web.org, idParam(ctx.params.project, projectNotFound));
  const projectId = async (ctx: WebContext) => Number((await project(ctx)).id);

  router.get('/projects', async (ctx) => {
    ctx.body = { projects: await admin.listProjects(ctx.state.web.org) };
  });
  router.post('/projects', ownerOnly, async (ctx) => {
    const input = await body<{ name: string; security_monitoring?: boolean }>(ctx, 'project-create');
    ctx.status = 201;
    ctx.body = await admin.createProject({ org: ctx.state.web.org, name: input.name, securityMonitoring: input.security_monitoring ?? true });
  });
  router.get('/projects/:project', async (ctx) => {
    ctx.body = await project(ctx);
  });
  router.patch('/projects/:project', ownerOnly, async (ctx) => {
    const id = await projectId(ctx);
    ctx.body = await admin.setProject(id, await body(ctx, 'project-settings'));
  });
  router.post('/projects/:project/keys', ownerOnly, async (ctx) => {
    const id = await projectId(ctx);
    ctx.body = await admin.rotateKey(id, (await body<{ kind: 'secret' | 'public' }>(ctx, 'key-rotate')).kind);
  });
  router.post('/projects/:project/unbind', ownerOnly, async (ctx) => {
    ctx.body = await admin.unbind(await projectId(ctx));
  });
  // The admin service checks alert settings against schemas/alerts.json, for the CLI and here alike.
  const alerts = async (ctx: WebContext) => (await readJson(ctx, deps.config.bodyLimitBytes)) as Partial<AlertSettings>;
  router.put('/projects/:project/alerts', async (ctx) => {
    const id = await projectId(ctx);
    ctx.body = await admin.setAlerts(id, await alerts(ctx));
  });
  router.post('/projects/:project/alerts/preview', async (ctx) => {
    const id = await projectId(ctx);
    ctx.body = await admin.previewAlerts(id, await alerts(ctx), new Date());
  });

  // Notification channels: an owner manages them; a member sees them (a webhook by its origin only) and their deliveries.
  const channelNotFound = () => new NotFoundError('channel_not_found', 'no such channel in this project');
  const channelId = (ctx: WebContext) => idParam(ctx.params.channel, channelNotFound);
  router.get('/projects/:project/channels', async (ctx) => {
    ctx.body = await deps.notifications.list(await projectId(ctx), { fullUrl: ctx.state.web.role === 'owner' });
  });
  router.post('/projects/:project/channels', ownerOnly, async (ctx) => {
    const id = await projectId(ctx);
    const added = await deps.notifications.add(id, await readJson(ctx, deps.config.bodyLimitBytes));
    ctx.status = 201;
    ctx.body = added;
  });
  router.delete('/projects/:project/channels/:channel', ownerOnly, async (ctx) => {
    ctx.body = await deps.notifications.remove(await projectId(ctx), channelId(ctx));
  });
  router.post('/projects/:project/channels/:channel/test', ownerOnly, async (ctx) => {
    ctx.body = await deps.notifications.test(await projectId(ctx), channelId(ctx));
  });
  router.post('/projects/:project/channels/:channel/resume', ownerOnly, async (ctx) => {
    ctx.body = await deps.notifications.resume(await projectId(ctx), channelId(ctx));
  });
  router.post('/projects/:project/channels/:channel/secret', ownerOnly, async (ctx) => {
    ctx.body = await deps.notifications.rotateSecret(await projectId(ctx), channelId(ctx));
  });
  router.get('/projects/:project/deliveries', async (ctx) => {
    const id = await projectId(ctx);
    const channel = ctx.query.channel === undefined ? undefined : idParam(ctx.query.channel as string, channelNotFound);
    ctx.body = await deps.notifications.deliveries(id, { channel });
  });

  router.get('/projects/:project/ingestion', async (ctx) => {
    ctx.body = await deps.ingestStats.read(await projectId(ctx), ingestionRange(deps, ctx.query));
  });

  router.get('/projects/:project/decisions', async (ctx) => {
    ctx.body = await deps.decisions.list(await projectId(ctx), new Date());
  });
  router.post('/projects/:project/decisions/:decision/lift', ownerOnly, async (ctx) => {
    ctx.body = await deps.decisions.lift(await projectId(ctx), ctx.params.decision ?? '', new Date());
  });

  router.get('/projects/:project/releases', async (ctx) => {
    ctx.body = await deps.releases.list(await projectId(ctx), releaseQuery(deps, ctx.query).environment, new Date());
  });
  router.get('/projects/:project/releases/:release', async (ctx) => {
    const id = await projectId(ctx);
    const { environment, range } = deps.validator.query<{ environment?: string; range: ChartRange }>('release-chart-query', ctx.query);
    const now = new Date();
    const since = new Date(now.getTime() - CHART_RANGES[range] * 3600_000);
    const release = await deps.releases.get(id, releaseParam(ctx.params.release), environment, now, since);
    ctx.body = { ...release, range, since: since.toISOString() };
  });

  mountIssueRoutes(router, deps, '/projects/:project/issues', (ctx) => projectId(ctx as WebContext));
  // An attachment's bytes, never served as what the SDK said they are: a file named page.html stays a download.
  router.get('/projects/:project/issues/:id/events/:event/attachments/:slot', async (ctx) => {
    if (!/^\d{1,2}$/.test(ctx.params.slot ?? '')) throw attachmentNotFound();
    const slot = Number(ctx.params.slot);
    const file = await deps.issues.attachment(await projectId(ctx), idParam(ctx.params.id, issueNotFound), eventIdParam(ctx.params.event), slot);
    if (!file.data) throw new NotFoundError('attachment_not_kept', `${file.filename} was over the event's attachment cap and was not kept`);
    ctx.set('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(file.filename)}`);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
    ctx.type = 'application/octet-stream';
    ctx.body = file.data;
  });

  router.get('/org', async (ctx) => {
    const org = ctx.state.web.org;
    const [shown, users] = await Promise.all([admin.showOrgUsage(org), deps.accounts.listUsers(org)]);
    ctx.body = { ...shown, users };
  });
  router.patch('/org', ownerOnly, async (ctx) => {
    ctx.body = await admin.setOrg(ctx.state.web.org, await body(ctx, 'org-settings'));
  });
  router.post('/org/people', ownerOnly, async (ctx) => {
    const input = await body<{ list: PersonList; email: string }>(ctx, 'person');
    ctx.body = await admin.person(ctx.state.web.org, input.list, 'add', input.email);
  });
  router.delete('/org/people/:list/:email', ownerOnly, async (ctx) => {
    const list = enumParam<PersonList>(ctx.params.list ?? '', 'list', ['members', 'invites', 'email_rules'])!;
    if (list === 'members' && (ctx.params.email ?? '').trim().toLowerCase() === ctx.state.web.email) {
      throw new ConflictError('cannot_remove_self', 'an owner cannot remove themselves; another owner can');
    }
    ctx.body = await admin.person(ctx.state.web.org, list, 'remove', ctx.params.email ?? '');
    // a member removed is offboarded: their account and sessions end now
    if (list === 'members') await deps.accounts.removeUser(ctx.state.web.org, ctx.params.email ?? '');
  });
  return router as unknown as Router<AppState>;
}
