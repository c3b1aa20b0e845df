/** GET /issues, GET /issues/:id, POST /issues/:id/status (spec 4.6–4.8). */
import Router from '@koa/router';
import { ISSUE_STATUSES, type IssueStatus } from '../../domain/issue-status.ts';
import { NotFoundError } from '../../errors.ts';
import type { AppDeps, AppState } from '../app.ts';
import { readJson } from '../body.ts';
import { requireSecretKey } from '../middleware/auth.middleware.ts';
import { enumParam, idParam, intParam } from '../params.ts';

export const issueNotFound = () => new NotFoundError('issue_not_found', 'no such issue in this project');

/** The paging and order of an issue list, as the API and the dashboard take them. */
export function issuePageQuery(q: Record<string, unknown>) {
  return {
    status: enumParam<IssueStatus>(q.status, 'status', ISSUE_STATUSES, 'unresolved'),
    limit: intParam(q.limit, 'limit', 1, 500, 100),
    offset: intParam(q.offset, 'offset', 0, 1_000_000, 0),
    order: enumParam(q.order, 'order', ['last_seen', 'id'] as const, 'last_seen'),
  };
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

  router.post('/:id/status', async (ctx) => {
    const id = idParam(ctx.params.id, issueNotFound);
    const body = deps.validator.check<{ status: IssueStatus }>('issue-status', await readJson(ctx, deps.config.bodyLimitBytes));
    ctx.body = await deps.issues.setStatus(ctx.state.project._id, id, body.status, new Date());
  });
  return router;
}
