/**
 * The reads the key API and the dashboard share (a project's issues with the status change, its release list, its
 * ingestion counts), mounted once for each way in: the key API (an installation's secret key: issues.route.ts,
 * releases.route.ts, ingestion.route.ts) and the dashboard (a person's session or token, dashboard.route.ts). Only
 * how the project is found differs; the routes, their contracts and their answers are the same.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { contracted, type Contract, type Tag } from '../contract.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { PARAMS, type PathParam } from '../params.ts';

/** How a mount finds the project: the key API by the key (`secret+instance`), the dashboard by the path (`dashboard`). */
export interface WayIn {
  auth: 'secret+instance' | 'dashboard';
  /** the path parameters before the issue's (the dashboard's project) */
  params: readonly PathParam[];
  projectOf: (ctx: Context) => Promise<number>;
  /** who asks: the signed-in member's email (`assigned:me`, and who changed a status), or null for a key */
  who: (ctx: Context) => string | null;
}

/** The key API's way in: the project of the secret key (checked by the router's requireSecretKey). */
export const KEY_WAY_IN: WayIn = { auth: 'secret+instance', params: [], projectOf: async (ctx) => (ctx.state as AppState).project._id, who: () => null };

/** The same contract under both ways in: only the tag, the auth, the leading path parameters and a 404 for the project differ. */
export const wayContract =
  (way: WayIn, tag: Tag) =>
  <C extends Omit<Contract, 'tag' | 'auth'>>(c: C): C & Pick<Contract, 'tag' | 'auth'> => ({
    ...c,
    tag: way.auth === 'dashboard' ? 'dashboard' : tag,
    auth: way.auth,
    params: [...way.params, ...(c.params ?? [])],
    errors: [...new Set([...(c.errors ?? []), ...(way.params.length ? [404] : [])])],
  });

export function mountIssueRoutes<S extends object>(router: Router<S>, deps: AppDeps, base: string, way: WayIn): void {
  const routes = contracted(router, deps);
  const contract = wayContract(way, 'issues');

  routes.get(
    base || '/',
    contract({
      summary: 'List issues (spec 4.6), filtered and ordered; each with `events_24h`, its events per hour over the last 24 hours',
      query: 'issue-list-query',
      ok: { 200: { description: 'a page of issues and the filters given', schema: 'issue-list' } },
      errors: [400],
    }),
    async (ctx, { query }) => {
      ctx.body = await deps.issues.list(await way.projectOf(ctx), query, way.who(ctx));
    },
  );
  routes.get(
    `${base}/:id`,
    contract({
      summary: 'One issue with its latest event (spec 4.7), its spread and hourly counts',
      params: [PARAMS.issue],
      ok: { 200: { description: 'the issue; `latest_event` null and `latest_event_expired: true` once retention deleted it', schema: 'issue-detail' } },
      errors: [400, 404],
    }),
    async (ctx, { params }) => {
      ctx.body = await deps.issues.get(await way.projectOf(ctx), params.id);
    },
  );
  routes.get(
    `${base}/:id/events`,
    contract({
      summary: "The issue's events, newest first",
      params: [PARAMS.issue],
      query: 'page-query',
      ok: { 200: { description: 'a page of events', schema: 'issue-events' } },
      errors: [400, 404],
    }),
    async (ctx, { params, query: { offset, limit } }) => {
      ctx.body = await deps.issues.events(await way.projectOf(ctx), params.id, offset, limit);
    },
  );
  routes.get(
    `${base}/:id/feedback`,
    contract({
      summary: "The issue's user feedback (Sentry SDKs' feedback and user_report items), newest first",
      params: [PARAMS.issue],
      query: 'page-query',
      ok: { 200: { description: 'a page of feedback', schema: 'issue-feedback' } },
      errors: [400, 404],
    }),
    async (ctx, { params, query: { offset, limit } }) => {
      ctx.body = await deps.issues.feedback(await way.projectOf(ctx), params.id, offset, limit);
    },
  );
  routes.get(
    `${base}/:id/events/:event`,
    contract({
      summary: 'One event of the issue, whole, with the ids of the newer and the older one',
      params: [PARAMS.issue, PARAMS.event],
      ok: { 200: { description: 'the event and its attachments', schema: 'issue-event' } },
      errors: [404],
    }),
    async (ctx, { params }) => {
      ctx.body = await deps.issues.event(await way.projectOf(ctx), params.id, params.event);
    },
  );
  routes.post(
    `${base}/:id/status`,
    contract({
      summary: 'Resolve (now, or in the next release), ignore (for good, until more events or until a time) or reopen an issue (spec 4.8)',
      params: [PARAMS.issue],
      body: { schema: 'issue-status' },
      ok: { 200: { description: 'the new status (spec 4.8)', schema: 'issue-status' } },
      errors: [400, 404, 413, 415],
    }),
    async (ctx, { params, body }) => {
      ctx.body = await deps.issues.setStatus(await way.projectOf(ctx), params.id, body, way.who(ctx) ?? 'key', new Date());
    },
  );
}

/** The ranges the ingestion counts are read over, in hours (schemas/ingestion-query.json names them). */
const INGESTION_HOURS = { '24h': 24, '14d': 14 * 24 } as const;

/** A project's release list (the Releases table) at `base`. */
export function mountReleaseList<S extends object>(router: Router<S>, deps: AppDeps, base: string, way: WayIn): void {
  contracted(router, deps).get(
    base || '/',
    wayContract(
      way,
      'releases',
    )({
      summary: 'Release health: crash-free rates and adoption per release',
      query: 'release-query',
      ok: { 200: { description: 'each release in each environment', schema: 'release-list' } },
      errors: [400],
    }),
    async (ctx, { query }) => {
      const project = await way.projectOf(ctx);
      const list = await deps.releases.list(project, query.environment, new Date());
      if (way.auth !== 'dashboard') {
        ctx.body = list;
        return;
      }
      // the dashboard's table also counts each release's issues
      const counts = await deps.issues.releaseIssues(project, [...new Set(list.releases.map((r) => r.release))]);
      ctx.body = { ...list, releases: list.releases.map((r) => ({ ...r, issues: counts.get(r.release)! })) };
    },
  );
}

/** What a project's ingestion accepted and dropped (Settings → Ingestion) at `base`. */
export function mountIngestionRead<S extends object>(router: Router<S>, deps: AppDeps, base: string, way: WayIn): void {
  contracted(router, deps).get(
    base || '/',
    wayContract(
      way,
      'events',
    )({
      summary: "What the project's ingestion accepted and dropped (not stored), by item type and reason, with hourly totals",
      query: 'ingestion-query',
      ok: { 200: { description: 'counts by type and reason, and by hour', schema: 'ingestion' } },
      errors: [400],
    }),
    async (ctx, { query }) => {
      const project = await way.projectOf(ctx);
      const [counts, spike] = await Promise.all([deps.ingestStats.read(project, INGESTION_HOURS[query.range]), deps.quotas.spike(project)]);
      ctx.body = { ...counts, spike };
    },
  );
}
