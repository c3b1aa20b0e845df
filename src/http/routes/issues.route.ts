/**
 * GET /issues, GET /issues/:id, POST /issues/:id/status (spec 4.6–4.8), and
 * an issue's events: GET /issues/:id/events, GET /issues/:id/events/:event_id.
 */
import Router from '@koa/router';
import type { IssueStatus } from '../../domain/issue-status.ts';
import { NotFoundError } from '../../errors.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { readJson } from '../body.ts';
import { requireSecretKey } from '../middleware/auth.middleware.ts';
import type { IssueListQuery } from '../../state/issue-reads.ts';
import type { Validator } from '../../validation/validator.ts';
import { idParam } from '../params.ts';

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

export function issuesRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1/issues' });
  router.use(requireSecretKey(deps.resolver, { instance: true }));

  router.get('/', async (ctx) => {
    ctx.body = await deps.issues.list(ctx.state.project._id, issuePageQuery(deps.validator, ctx.query));
  });

  router.get('/:id', async (ctx) => {
    ctx.body = await deps.issues.get(ctx.state.project._id, idParam(ctx.params.id, issueNotFound));
  });

  router.get('/:id/events', async (ctx) => {
    const { offset, limit } = eventPageQuery(deps.validator, ctx.query);
    ctx.body = await deps.issues.events(ctx.state.project._id, idParam(ctx.params.id, issueNotFound), offset, limit);
  });

  router.get('/:id/feedback', async (ctx) => {
    const { offset, limit } = eventPageQuery(deps.validator, ctx.query);
    ctx.body = await deps.issues.feedback(ctx.state.project._id, idParam(ctx.params.id, issueNotFound), offset, limit);
  });

  router.get('/:id/events/:event', async (ctx) => {
    ctx.body = await deps.issues.event(ctx.state.project._id, idParam(ctx.params.id, issueNotFound), eventIdParam(ctx.params.event));
  });

  router.post('/:id/status', async (ctx) => {
    const id = idParam(ctx.params.id, issueNotFound);
    const body = deps.validator.check<{ status: IssueStatus }>('issue-status', await readJson(ctx, deps.config.bodyLimitBytes));
    ctx.body = await deps.issues.setStatus(ctx.state.project._id, id, body.status, new Date());
  });
  return router;
}
