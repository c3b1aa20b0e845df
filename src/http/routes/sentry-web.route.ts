/**
 * Sentry's web API for the tools teams already run (issue 70): `sentry-cli` (info, organizations, projects, releases,
 * deploys, issues, events) and Sentry's MCP server (find_organizations, find_projects, search_issues,
 * get_sentry_resource, update_issue, find_releases, search_events). An API token (`Authorization: Bearer lkt_…`)
 * within its scopes; organisations and projects by slug or id, issues by id or short id (`SHOP-1F`); lists page by
 * Sentry's cursor in the `Link` header; errors carry Sentry's `detail` (errors.middleware.ts). `docs/api.md` has
 * the table of each tool, each command and its endpoint.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { linkHeader, readCursor } from '../../domain/sentry-api.ts';
import { BadRequestError, NotFoundError } from '../../errors.ts';
import { contracted, paramsOf, type Contract } from '../contract.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { textParam } from '../params.ts';
import type { WebState } from './dashboard-session.route.ts';
import { toolToken } from './tool-token.ts';

const ORG = textParam('org', "the organisation's slug or id");
const PROJECT = textParam('project', "the project's slug or id");
const ISSUE = textParam('issue', 'an issue id, or its short id (SHOP-1F)');
const EVENT = textParam('event', 'an event id, or `latest`');
const VERSION = textParam('version', 'a release version');

type Ctx = Context & { state: WebState };

/** Events a list page holds unless `per_page` asks otherwise (lists of issues and releases hold 100, as Sentry's). */
const EVENTS_PAGE = 50;

/** A query parameter's values (Sentry repeats `project`, `field` and `id`). */
const many = (ctx: Context, name: string): string[] => {
  const v = ctx.query[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
};
const one = (ctx: Context, name: string): string | undefined => many(ctx, name)[0];

/** The page a list request asks for: Sentry's `cursor`, and `per_page` or `limit` (100 most, as Sentry). */
function pageOf(ctx: Context, fallback = 100) {
  const size = Number(one(ctx, 'per_page') ?? one(ctx, 'limit') ?? fallback);
  if (!Number.isInteger(size) || size < 1) throw new BadRequestError('invalid_per_page', 'per_page is a whole number from 1 to 100');
  return { offset: readCursor(one(ctx, 'cursor')), limit: Math.min(100, size) };
}

/** Answers a page of a list with Sentry's `Link` header. */
function paged(ctx: Context, page: { offset: number; limit: number }, found: { rows: unknown[]; more: boolean }) {
  ctx.set('Link', linkHeader(new URL(ctx.href), page.offset, page.limit, found.more));
  ctx.body = found.rows;
}

export function sentryWebRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<WebState>({ prefix: '/api/0' });
  const routes = contracted(router, deps);
  const api = deps.sentryApi;

  const token = toolToken(deps);
  const orgOf = (ctx: Ctx) => deps.sourcemaps.organisation(paramsOf(ctx).org as string, ctx.state.web.org);
  /** The token's own organisation (for paths that name none). */
  const tokenOrg = (ctx: Ctx) => deps.sourcemaps.organisation(String(ctx.state.web.org), ctx.state.web.org);
  const projectOf = async (ctx: Ctx) => api.projectOf(await orgOf(ctx), paramsOf(ctx).project as string);
  const read = <C extends Omit<Contract, 'tag' | 'auth'>>(c: C) => ({ ...c, tag: 'releases' as const, auth: 'token' as const, errors: [...new Set([400, 404, ...(c.errors ?? [])])] });

  routes.get('/', read({ summary: 'Who the token acts for, and its scopes (sentry-cli info)', ok: { 200: { description: 'the user and the token', schema: 'sentry-root' } } }), token(), async (ctx) => {
    const web = ctx.state.web as WebState['web'] & { scopes: string[] };
    ctx.body = { version: '0', auth: { scopes: web.scopes }, user: { id: web.email, email: web.email, name: web.email, username: web.email } };
  });

  routes.get('/organizations/', read({ summary: "The token's organisation (sentry-cli organizations list; MCP find_organizations)", ok: { 200: { description: 'one organisation', schema: 'sentry-organizations' } } }), token('org:read', 'project:read'), async (ctx) => {
    paged(ctx, { offset: 0, limit: 100 }, { rows: [api.org(await tokenOrg(ctx))], more: false });
  });
  routes.get('/organizations/:org/', read({ summary: 'One organisation', params: [ORG], ok: { 200: { description: 'the organisation', schema: 'sentry-organization' } } }), token('org:read', 'project:read'), async (ctx) => {
    ctx.body = api.org(await orgOf(ctx));
  });
  routes.get('/organizations/:org/projects/', read({ summary: "The organisation's projects (sentry-cli projects list; MCP find_projects)", params: [ORG], ok: { 200: { description: 'the projects', schema: 'sentry-projects' } } }), token('project:read'), async (ctx) => {
    const rows = await api.projects(await orgOf(ctx));
    paged(ctx, { offset: 0, limit: rows.length }, { rows, more: false });
  });
  routes.get('/projects/:org/:project/', read({ summary: 'One project', params: [ORG, PROJECT], ok: { 200: { description: 'the project', schema: 'sentry-project' } } }), token('project:read'), async (ctx) => {
    const org = await orgOf(ctx);
    ctx.body = api.project(await api.projectOf(org, paramsOf(ctx).project as string), org);
  });

  // issues
  const issueList = { ok: { 200: { description: 'a page of issues, Sentry-shaped; `Link` pages on', schema: 'sentry-issues' } } } as const;
  routes.get(
    '/projects/:org/:project/issues/',
    read({ ...issueList, summary: "A project's issues: `query` in Sentry's syntax, `statsPeriod`, `sort`, `cursor` (sentry-cli issues list)", params: [ORG, PROJECT] }),
    token('project:read'),
    async (ctx) => {
      const page = pageOf(ctx);
      paged(ctx, page, await api.issueList([await projectOf(ctx)], { query: one(ctx, 'query'), statsPeriod: one(ctx, 'statsPeriod'), sort: one(ctx, 'sort') }, page));
    },
  );
  routes.get(
    '/organizations/:org/issues/',
    read({ ...issueList, summary: "The organisation's issues, or those of `project=<id>` (MCP search_issues; Grafana)", params: [ORG] }),
    token('project:read'),
    async (ctx) => {
      const page = pageOf(ctx);
      const org = await orgOf(ctx);
      paged(ctx, page, await api.issueList(await api.projectsNamed(org, many(ctx, 'project')), { query: one(ctx, 'query'), statsPeriod: one(ctx, 'statsPeriod'), sort: one(ctx, 'sort') }, page));
    },
  );
  const oneIssue = { ok: { 200: { description: 'the issue, Sentry-shaped', schema: 'sentry-issue' } } } as const;
  routes.get('/organizations/:org/issues/:issue/', read({ ...oneIssue, summary: 'One issue by id or short id (MCP get_sentry_resource)', params: [ORG, ISSUE] }), token('project:read'), async (ctx) => {
    ctx.body = await api.issue(await orgOf(ctx), paramsOf(ctx).issue as string);
  });
  routes.put(
    '/organizations/:org/issues/:issue/',
    read({ ...oneIssue, summary: "Changes an issue's status: resolved, resolvedInNextRelease, unresolved, ignored (MCP update_issue)", params: [ORG, ISSUE], body: { schema: 'sentry-issue-update' } }),
    token('project:write'),
    async (ctx, { body }) => {
      ctx.body = await api.updateIssue(await orgOf(ctx), paramsOf(ctx).issue as string, body, ctx.state.web.email, new Date());
    },
  );
  routes.put(
    '/projects/:org/:project/issues/',
    read({
      summary: 'Changes the status of the issues named by `id` (repeated) or of every issue of `status` (sentry-cli issues resolve|mute|unresolve)',
      params: [ORG, PROJECT],
      body: { schema: 'sentry-issue-update' },
      ok: { 200: { description: 'the status set', schema: 'sentry-issues-updated' } },
    }),
    token('project:write'),
    async (ctx, { body }) => {
      const org = await orgOf(ctx);
      const project = await api.projectOf(org, paramsOf(ctx).project as string);
      const ids = many(ctx, 'id');
      const refs = ids.length
        ? await Promise.all(ids.map((id) => api.issueRef(org, id, project)))
        : await api.allIssues(project, one(ctx, 'status') ?? 'unresolved');
      const change = await api.setStatus(refs, body, ctx.state.web.email, new Date());
      ctx.body = { status: body.status, statusDetails: change.status === 'resolved' && change.in_next_release ? { inNextRelease: true } : {} };
    },
  );
  routes.get(
    '/organizations/:org/issues/:issue/events/',
    read({ summary: "An issue's events, newest first", params: [ORG, ISSUE], ok: { 200: { description: 'a page of events', schema: 'sentry-events' } } }),
    token('project:read'),
    async (ctx) => {
      const page = pageOf(ctx, EVENTS_PAGE);
      paged(ctx, page, await api.issueEvents(await orgOf(ctx), paramsOf(ctx).issue as string, page));
    },
  );
  routes.get(
    '/organizations/:org/issues/:issue/events/:event/',
    read({ summary: "An issue's latest event (`latest`) or one of its events, whole, with its `entries` (MCP get_sentry_resource)", params: [ORG, ISSUE, EVENT], ok: { 200: { description: 'the event', schema: 'sentry-event' } } }),
    token('project:read'),
    async (ctx) => {
      const { issue, event } = paramsOf(ctx) as { issue: string; event: string };
      if (event !== 'latest' && !/^[0-9a-f]{32}$/i.test(event.replace(/-/g, ''))) throw new NotFoundError('event_not_found', `no event ${event}`);
      ctx.body = await api.issueEvent(await orgOf(ctx), issue, event === 'latest' ? event : event.replace(/-/g, '').toLowerCase());
    },
  );

  // GitLab's error tracking addresses issues without the organisation (issue ids are unique across Lookout)
  routes.get('/projects/', read({ summary: "Every project of the token's organisation, each naming it (GitLab's project picker)", ok: { 200: { description: 'the projects', schema: 'sentry-projects' } } }), token('project:read'), async (ctx) => {
    const rows = await api.projects(await tokenOrg(ctx));
    paged(ctx, { offset: 0, limit: rows.length }, { rows, more: false });
  });
  routes.get('/issues/:issue/', read({ ...oneIssue, summary: 'One issue, by id or short id, in the token’s organisation (GitLab)', params: [ISSUE] }), token('project:read'), async (ctx) => {
    ctx.body = await api.issue(await tokenOrg(ctx), paramsOf(ctx).issue as string);
  });
  routes.put(
    '/issues/:issue/',
    read({ ...oneIssue, summary: "Changes an issue's status, in the token's organisation (GitLab)", params: [ISSUE], body: { schema: 'sentry-issue-update' } }),
    token('project:write'),
    async (ctx, { body }) => {
      ctx.body = await api.updateIssue(await tokenOrg(ctx), paramsOf(ctx).issue as string, body, ctx.state.web.email, new Date());
    },
  );
  routes.get('/issues/:issue/events/latest/', read({ summary: "An issue's latest event, whole (GitLab)", params: [ISSUE], ok: { 200: { description: 'the event', schema: 'sentry-event' } } }), token('project:read'), async (ctx) => {
    ctx.body = await api.issueEvent(await tokenOrg(ctx), paramsOf(ctx).issue as string, 'latest');
  });

  // events
  routes.get(
    '/projects/:org/:project/events/',
    read({ summary: "A project's newest events, 50 a page unless `per_page` says (sentry-cli events list)", params: [ORG, PROJECT], ok: { 200: { description: 'a page of events', schema: 'sentry-events' } } }),
    token('project:read'),
    async (ctx) => {
      // each row opens its stored event (its user and tags): a page of 50 answers in half the time of 100
      const page = pageOf(ctx, EVENTS_PAGE);
      paged(ctx, page, await api.events([await projectOf(ctx)], one(ctx, 'query'), page));
    },
  );
  routes.get(
    '/organizations/:org/events/validate/',
    read({ summary: 'Whether an events search can be served: its dataset and fields (MCP search_events asks first)', params: [ORG], ok: { 200: { description: 'what is valid', schema: 'sentry-events-validate' } } }),
    token('project:read'),
    async (ctx) => {
      const answer = api.validate(one(ctx, 'dataset') ?? 'errors', many(ctx, 'field'));
      ctx.status = answer.valid ? 200 : 400;
      ctx.body = answer;
    },
  );
  routes.get(
    '/organizations/:org/events/',
    read({ summary: 'Events of the errors dataset with the fields asked (`field`, repeated), newest first (MCP search_events)', params: [ORG], ok: { 200: { description: 'the rows and their fields', schema: 'sentry-discover' } } }),
    token('project:read'),
    async (ctx) => {
      const dataset = one(ctx, 'dataset') ?? 'errors';
      if (dataset !== 'errors') throw new BadRequestError('unknown_dataset', `Lookout searches the errors dataset only, not ${dataset}`);
      const page = pageOf(ctx, EVENTS_PAGE);
      const org = await orgOf(ctx);
      const found = await api.discover(await api.projectsNamed(org, many(ctx, 'project')), one(ctx, 'query'), many(ctx, 'field'), page);
      ctx.set('Link', linkHeader(new URL(ctx.href), page.offset, page.limit, found.more));
      ctx.body = { data: found.rows, meta: found.meta };
    },
  );

  // releases and deploys
  const releaseList = { ok: { 200: { description: 'a page of releases, newest first', schema: 'sentry-releases' } } } as const;
  routes.get('/organizations/:org/releases/', read({ ...releaseList, summary: "The organisation's releases (MCP find_releases; sentry-cli releases list)", params: [ORG] }), token('project:read', 'project:releases'), async (ctx) => {
    const page = pageOf(ctx);
    const org = await orgOf(ctx);
    paged(ctx, page, await api.releases(await api.projectsNamed(org, many(ctx, 'project')), one(ctx, 'query'), page, new Date()));
  });
  routes.get('/projects/:org/:project/releases/', read({ ...releaseList, summary: "A project's releases (sentry-cli releases list -p)", params: [ORG, PROJECT] }), token('project:read', 'project:releases'), async (ctx) => {
    const page = pageOf(ctx);
    paged(ctx, page, await api.releases([await projectOf(ctx)], one(ctx, 'query'), page, new Date()));
  });
  routes.get('/organizations/:org/releases/:version/', read({ summary: 'One release', params: [ORG, VERSION], ok: { 200: { description: 'the release', schema: 'sentry-release' } } }), token('project:read', 'project:releases'), async (ctx) => {
    const org = await orgOf(ctx);
    ctx.body = await api.release(await api.projectsNamed(org, many(ctx, 'project')), paramsOf(ctx).version as string, new Date());
  });
  routes.get('/organizations/:org/releases/:version/deploys/', read({ summary: "A release's deploys, newest first (sentry-cli deploys list)", params: [ORG, VERSION], ok: { 200: { description: 'the deploys', schema: 'sentry-deploys' } } }), token('project:read', 'project:releases'), async (ctx) => {
    ctx.body = await api.deploys(await orgOf(ctx), paramsOf(ctx).version as string, new Date());
  });
  routes.post(
    '/organizations/:org/releases/:version/deploys/',
    read({ summary: 'Records a deploy of a release to an environment (sentry-cli deploys new)', params: [ORG, VERSION], body: { schema: 'sentry-deploy' }, ok: { 201: { description: 'the deploy', schema: 'sentry-deploy' } } }),
    token('project:releases'),
    async (ctx, { body }) => {
      ctx.status = 201;
      ctx.body = await api.addDeploy(await orgOf(ctx), paramsOf(ctx).version as string, body, new Date());
    },
  );

  return router as unknown as Router<AppState>;
}
