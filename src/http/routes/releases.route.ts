/** GET /releases, GET /releases/:release (the Releases page; secret key and instance, like the issues endpoints). */
import Router from '@koa/router';
import { BadRequestError } from '../../errors.ts';
import type { AppDeps, AppState } from '../app.ts';
import { requireSecretKey } from '../middleware/auth.middleware.ts';

function environmentParam(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > 64) {
    throw new BadRequestError('invalid_query', 'environment must be one non-empty string of at most 64 characters', {
      errors: [{ path: 'environment', message: 'invalid' }],
    });
  }
  return value;
}

export function releasesRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/v1/releases' });
  router.use(requireSecretKey(deps.resolver, { instance: true }));

  router.get('/', async (ctx) => {
    ctx.body = await deps.releases.list(ctx.state.project._id, environmentParam(ctx.query.environment), new Date());
  });

  router.get('/:release', async (ctx) => {
    const release = ctx.params.release ?? '';
    if (release.length === 0 || release.length > 200) throw new BadRequestError('invalid_release', 'a release name has 1 to 200 characters');
    ctx.body = await deps.releases.get(ctx.state.project._id, release, environmentParam(ctx.query.environment), new Date());
  });
  return router;
}
