/** GET /issues, GET /issues/:id, POST /issues/:id/status (spec 4.6–4.8). */
import Router from '@koa/router';
import { ISSUE_STATUSES, type IssueStatus } from '../../domain/issue-status.ts';
import { BadRequestError, NotFoundError } from '../../errors.ts';
import type { AppDeps, AppState } from '../app.ts';
import { readJson } from '../body.ts';
import { requireSecretKey } from '../middleware/auth.middleware.ts';

function intParam(value: unknown, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^\d{1,9}$/.test(value) || Number(value) < min || Number(value) > max) {
    const message = `must be a whole number from ${min} to ${max}`;
    throw new BadRequestError('invalid_query', `${name}: ${message}`, { errors: [{ path: name, message }] });
  }
  return Number(value);
}
function enumParam<T extends string>(value: unknown, name: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    const message = `must be one of: ${allowed.join(', ')}`;
    throw new BadRequestError('invalid_query', `${name}: ${message}`, { errors: [{ path: name, message }] });
  }
  return value as T;
}
function issueId(value: string | undefined): number {
  if (!value || !/^[1-9]\d{0,15}$/.test(value)) throw new NotFoundError('issue_not_found', 'no such issue in this project');
  return Number(value);
}

export function issuesRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1/issues' });
  router.use(requireSecretKey(deps.resolver, { instance: true }));

  router.get('/', async (ctx) => {
    const q = ctx.query;
    ctx.body = await deps.issues.list(ctx.state.project._id, {
      status: enumParam<IssueStatus>(q.status, 'status', ISSUE_STATUSES, 'unresolved'),
      limit: intParam(q.limit, 'limit', 1, 500, 100),
      offset: intParam(q.offset, 'offset', 0, 1_000_000, 0),
      order: enumParam(q.order, 'order', ['last_seen', 'id'] as const, 'last_seen'),
    });
  });

  router.get('/:id', async (ctx) => {
    ctx.body = await deps.issues.get(ctx.state.project._id, issueId(ctx.params.id));
  });

  router.post('/:id/status', async (ctx) => {
    const id = issueId(ctx.params.id);
    const body = deps.validator.check<{ status: IssueStatus }>('issue-status', await readJson(ctx, deps.config.bodyLimitBytes));
    ctx.body = await deps.issues.setStatus(ctx.state.project._id, id, body.status, new Date());
  });
  return router;
}
