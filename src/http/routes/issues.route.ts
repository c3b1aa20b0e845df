/**
 * GET /issues, GET /issues/:id, POST /issues/:id/status (spec 4.6–4.8), and
 * an issue's events: GET /issues/:id/events, GET /issues/:id/events/:event_id.
 */
import Router from '@koa/router';
import { ISSUE_STATUSES, type IssueStatus } from '../../domain/issue-status.ts';
import { NotFoundError } from '../../errors.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { readJson } from '../body.ts';
import { requireSecretKey } from '../middleware/auth.middleware.ts';
import { ISSUE_ORDERS, type IssueListQuery } from '../../state/issue-reads.ts';
import { LEVELS } from '../../domain/error-event.ts';
import { enumParam, environmentParam, idParam, intParam, textParam } from '../params.ts';

export const issueNotFound = () => new NotFoundError('issue_not_found', 'no such issue in this project');

export const eventNotFound = () => new NotFoundError('event_not_found', 'no such event in this issue');

/** The filters, paging and order of an issue list, as the API and the dashboard take them. */
export function issuePageQuery(q: Record<string, unknown>): IssueListQuery {
  return {
    status: enumParam<IssueStatus>(q.status, 'status', ISSUE_STATUSES, 'unresolved'),
    limit: intParam(q.limit, 'limit', 1, 500, 100),
    offset: intParam(q.offset, 'offset', 0, 1_000_000, 0),
    order: enumParam(q.order, 'order', ISSUE_ORDERS, 'last_seen'),
    kind: enumParam(q.kind, 'kind', ['error', 'security'] as const),
    release: textParam(q.release, 'release', 200),
    environment: environmentParam(q.environment),
    level: enumParam(q.level, 'level', LEVELS),
    company: textParam(q.company, 'company', 200),
    query: textParam(q.query, 'query', 200),
  };
}

/** The paging of an issue's events. */
export function eventPageQuery(q: Record<string, unknown>) {
  return { limit: intParam(q.limit, 'limit', 1, 100, 25), offset: intParam(q.offset, 'offset', 0, 1_000_000, 0) };
}

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
    ctx.body = await deps.issues.list(ctx.state.project._id, issuePageQuery(ctx.query));
  });

  router.get('/:id', async (ctx) => {
    ctx.body = await deps.issues.get(ctx.state.project._id, idParam(ctx.params.id, issueNotFound));
  });

  router.get('/:id/events', async (ctx) => {
    const { offset, limit } = eventPageQuery(ctx.query);
    ctx.body = await deps.issues.events(ctx.state.project._id, idParam(ctx.params.id, issueNotFound), offset, limit);
  });

  router.get('/:id/feedback', async (ctx) => {
    const { offset, limit } = eventPageQuery(ctx.query);
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
