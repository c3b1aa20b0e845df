/**
 * Admission's second word (issue 51), ahead of the ingest routers: a project already over a quota or held by spike
 * protection is refused before its body is read, where the route says what it carries (a store event, a CSP
 * report, sessions); what an envelope or the native endpoint carries is only known from its body, and is counted
 * against the project's quotas there (src/services/events.service.ts). What this process cannot take at all was
 * refused before Koa (src/http/admission-gate.ts).
 *
 * Every refusal has Retry-After, and on the Sentry routes X-Sentry-Rate-Limits, refusals made from the body
 * included; those made here are counted by reason in `/metrics` and in the project's ingestion.
 */
import type { Middleware } from 'koa';
import { sentryRateLimits } from '../../domain/admission.ts';
import { quotasOf } from '../../domain/quotas.ts';
import { QuotaRefusedError, RefusedError } from '../../errors.ts';
import type { Metrics } from '../../metrics/metrics.ts';
import type { KeyResolver } from '../key-resolver.ts';
import type { IngestStats } from '../../state/ingest-stats.ts';
import type { QuotaCounter } from '../../state/quotas.ts';
import type { Turns } from '../../util/turns.ts';
import { ingestKey, ingestRoute } from '../admission-gate.ts';
import type { AppState } from '../state.ts';
import { CORS_ANSWER_HEADERS } from './cors.middleware.ts';

export function admissionMiddleware(deps: { quotas: QuotaCounter; resolver: KeyResolver; stats: IngestStats; metrics: Metrics; turns: Turns }): Middleware<AppState> {
  return async (ctx, next) => {
    const route = ingestRoute(ctx.method, ctx.path);
    if (!route) return next();
    // its work waits for its turn of the thread once its body is read (src/http/body.ts)
    ctx.state.turn = deps.turns.take;
    try {
      const key = route.category ? ingestKey(route, ctx) : undefined;
      const project = key ? (await deps.resolver.resolve(key).catch(() => null))?.project : undefined;
      if (project && route.category) {
        const verdict = deps.quotas.peek(project._id, quotasOf(project.quotas), route.category);
        if (!verdict.admit) {
          deps.metrics.refused.inc({ route: route.name, reason: verdict.reason });
          deps.stats.record(project._id, 'dropped', route.type, verdict.reason);
          if (route.cors) ctx.set(CORS_ANSWER_HEADERS); // the route's own CORS middleware is not reached
          throw new QuotaRefusedError(verdict.reason, verdict.retryAfter, route.category);
        }
      }
      await next();
    } catch (err) {
      // a refusal made from the body (a quota, spike protection) says the same to a Sentry SDK
      if (route.sentry && err instanceof RefusedError) ctx.set('X-Sentry-Rate-Limits', sentryRateLimits(err.retryAfter, err.reason, err.categories, err.scope));
      throw err;
    }
  };
}
