/**
 * Admission's second word (issue 51), ahead of the ingest routers: a project already over a quota or held by spike
 * protection is refused before its body is read, where the route says what it carries (a store event, a CSP
 * report, sessions); what an envelope or the native endpoint carries is only known from its body, and is refused
 * there (the events' `accept`). Both ask src/services/quota.service.ts, which also counts what is stored. What this
 * process cannot take at all was refused before Koa (src/http/admission-gate.ts).
 *
 * Every refusal has Retry-After, and on the Sentry routes X-Sentry-Rate-Limits, refusals made from the body
 * included; those made here are counted by reason in `/metrics` and in the project's ingestion.
 */
import type { Context, Middleware } from 'koa';
import { sentryRateLimits } from '../../domain/admission.ts';
import type { QuotaCategory } from '../../domain/quotas.ts';
import { RefusedError } from '../../errors.ts';
import type { Metrics } from '../../metrics/metrics.ts';
import type { KeyResolver } from '../key-resolver.ts';
import type { QuotaService } from '../../services/quota.service.ts';
import type { ProjectDoc } from '../../store/projects.store.ts';
import type { Turns } from '../../util/turns.ts';
import { ingestKey, ingestRoute, senderOf, type IngestRoute } from '../admission-gate.ts';
import type { AppState } from '../state.ts';
import { CORS_ANSWER_HEADERS } from './cors.middleware.ts';

export function admissionMiddleware(deps: { quota: QuotaService; resolver: KeyResolver; metrics: Metrics; turns: Turns }): Middleware<AppState> {
  /** A project already over the quota of what the route carries is refused before its body is read. */
  function refuseIfOver(project: ProjectDoc, route: IngestRoute, category: QuotaCategory, ctx: Context): void {
    try {
      deps.quota.refuseIfOver(project, { category, type: route.type });
    } catch (err) {
      if (!(err instanceof RefusedError)) throw err;
      deps.metrics.refused.inc({ route: route.name, reason: err.reason });
      if (route.cors) ctx.set(CORS_ANSWER_HEADERS); // the route's own CORS middleware is not reached
      throw err;
    }
  }

  return async (ctx, next) => {
    const route = ingestRoute(ctx.method, ctx.path);
    if (!route) return next();
    try {
      const key = ingestKey(route, ctx);
      const project = key ? (await deps.resolver.resolve(key).catch(() => null))?.project : undefined;
      // its work waits for its turn of the thread once its body is read (src/http/body.ts), senders in rotation
      const sender = senderOf(project?._id, key);
      ctx.state.turn = () => deps.turns.take(sender);
      if (project && route.category) refuseIfOver(project, route, route.category, ctx);
      // What the native route and an envelope carry is known from the body alone. When its error events would be
      // refused, the body is read without waiting for a turn behind the work taken: a storm's refusals (the events'
      // `accept`) then cost little more than reading them.
      else if (project && deps.quota.over(project, 'error')) ctx.state.turn = undefined;
      await next();
    } catch (err) {
      // a refusal made from the body (a quota, spike protection) says the same to a Sentry SDK
      if (route.sentry && err instanceof RefusedError) ctx.set('X-Sentry-Rate-Limits', sentryRateLimits(err.retryAfter, err.reason, err.categories, err.scope));
      throw err;
    }
  };
}
