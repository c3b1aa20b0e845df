/**
 * The issue reads and the status change, mounted once for each way in: the key API (an installation's secret
 * key, src/http/routes/issues.route.ts) and the dashboard (a person's session or token, dashboard.route.ts).
 * Only how the project is found differs; the routes, their contracts and their answers are the same.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { IssueStatus } from '../../domain/issue-status.ts';
import { readJson } from '../body.ts';
import type { AppDeps } from '../deps.ts';
import { idParam } from '../params.ts';
import { NotFoundError } from '../../errors.ts';
import type { IssueListQuery } from '../../state/issue-reads.ts';
import type { Validator } from '../../validation/validator.ts';

export const issueNotFound = () => new NotFoundError('issue_not_found', 'no such issue in this project');

export const eventNotFound = () => new NotFoundError('event_not_found', 'no such event in this issue');

/** The filters, paging and order of an issue list (schemas/issue-list-query.json), as the API and the dashboard take them. */
export const issuePageQuery = (validator: Validator, q: Record<string, unknown>) => validator.query<IssueListQuery>('issue-list-query', q);

/** The paging of an issue's events or feedback (schemas/page-query.json). */
export const eventPageQuery = (validator: Validator, q: Record<string, unknown>) => validator.query<{ limit: number; offset: number }>('page-query', q);

/** An event id in a path: 32 hex characters (a UUID's dashes and capitals are read too); anything else names nothing. */
export function eventIdParam(value: string | undefined): string {
  const id = (value ?? '').toLowerCase().replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/.test(id)) throw eventNotFound();
  return id;
}

export function mountIssueRoutes<S>(router: Router<S>, deps: AppDeps, base: string, projectOf: (ctx: Context) => Promise<number>): void {
  const issue = (ctx: Context & { params: Record<string, string | undefined> }) => idParam(ctx.params.id, issueNotFound);
  router.get(base || '/', async (ctx) => {
    ctx.body = await deps.issues.list(await projectOf(ctx), issuePageQuery(deps.validator, ctx.query));
  });
  router.get(`${base}/:id`, async (ctx) => {
    ctx.body = await deps.issues.get(await projectOf(ctx), issue(ctx));
  });
  router.get(`${base}/:id/events`, async (ctx) => {
    const { offset, limit } = eventPageQuery(deps.validator, ctx.query);
    ctx.body = await deps.issues.events(await projectOf(ctx), issue(ctx), offset, limit);
  });
  router.get(`${base}/:id/feedback`, async (ctx) => {
    const { offset, limit } = eventPageQuery(deps.validator, ctx.query);
    ctx.body = await deps.issues.feedback(await projectOf(ctx), issue(ctx), offset, limit);
  });
  router.get(`${base}/:id/events/:event`, async (ctx) => {
    ctx.body = await deps.issues.event(await projectOf(ctx), issue(ctx), eventIdParam(ctx.params.event));
  });
  router.post(`${base}/:id/status`, async (ctx) => {
    const project = await projectOf(ctx);
    const id = issue(ctx);
    const body = deps.validator.check<{ status: IssueStatus }>('issue-status', await readJson(ctx, deps.config.bodyLimitBytes));
    ctx.body = await deps.issues.setStatus(project, id, body.status, new Date());
  });
}
