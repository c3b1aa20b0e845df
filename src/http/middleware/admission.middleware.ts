/**
 * Admission (issue 51): the one place, ahead of the ingest routers, that refuses what Lookout cannot take now,
 * before reading a body. A busy process (its group commits' backlog, the event loop's delay, the job queues' depth)
 * answers 429; a store that cannot take more (Redis near `maxmemory`, the data folder's disk under its floor)
 * answers 503. The native events endpoint answers 503 either way: it carries sign-in attempts, which are never
 * refused for being many, and which the installation's SDK retries (src/domain/admission.ts).
 *
 * A project already over a quota or held by spike protection is refused here too where the route says what it
 * carries (a store event, a CSP report, sessions); what an envelope or the native endpoint carries is only known
 * from its body, and is counted against the project's quotas there (src/services/events.service.ts).
 *
 * Every refusal has Retry-After, and on the Sentry routes X-Sentry-Rate-Limits; each is counted by reason in
 * `/metrics` and, when its key names a project, in that project's ingestion.
 */
import type { Context, Middleware } from 'koa';
import { sentryRateLimits, type AdmissionReason } from '../../domain/admission.ts';
import type { QuotaCategory } from '../../domain/quotas.ts';
import { quotasOf } from '../../domain/quotas.ts';
import { QuotaRefusedError, RefusedError } from '../../errors.ts';
import type { Metrics } from '../../metrics/metrics.ts';
import type { LoadSampler } from '../../services/load.service.ts';
import type { KeyResolver } from '../../services/key-resolver.ts';
import type { IngestStats } from '../../state/ingest-stats.ts';
import type { QuotaCounter } from '../../state/quotas.ts';
import type { ProjectDoc } from '../../store/projects.store.ts';
import type { AppState } from '../state.ts';
import { sentryKey, serviceKey } from './auth.middleware.ts';

/** An ingest route as admission sees it: what it counts as, what it carries (when the path says), its key. */
interface IngestRoute {
  name: 'events' | 'sessions' | 'envelope' | 'store' | 'security';
  /** the item type its refusals are counted as in the project's ingestion */
  type: string;
  /** the quota its requests count against, when the route alone says */
  category: QuotaCategory | null;
  sentry: boolean;
  key: (ctx: Context) => string | undefined;
}

function ingestRoute(ctx: Context): IngestRoute | null {
  if (ctx.method !== 'POST') return null;
  const path = ctx.path;
  if (path === '/api/v1/events') return { name: 'events', type: 'event', category: null, sentry: false, key: serviceKey };
  if (path === '/api/v1/sessions') return { name: 'sessions', type: 'session', category: 'session', sentry: false, key: serviceKey };
  const sentry = /^\/api\/(?:\d+\/)?(envelope|store|security)\/?$/.exec(path);
  if (!sentry) return null;
  const name = sentry[1] as 'envelope' | 'store' | 'security';
  return { name, type: name === 'envelope' ? 'envelope' : name === 'store' ? 'event' : 'security', category: name === 'envelope' ? null : 'error', sentry: true, key: sentryKey };
}

export function admissionMiddleware(deps: { load: LoadSampler; quotas: QuotaCounter; resolver: KeyResolver; stats: IngestStats; metrics: Metrics }): Middleware<AppState> {
  /** The project a request's key names, from the resolver's cache or one lookup; null when none. */
  const projectOf = async (ctx: Context, route: IngestRoute) => {
    const key = route.key(ctx);
    return key ? ((await deps.resolver.resolve(key).catch(() => null))?.project ?? null) : null;
  };

  return async (ctx, next) => {
    const route = ingestRoute(ctx);
    if (!route) return next();
    let project: ProjectDoc | null | undefined; // looked up once, when a quota or a refusal's count needs it
    let beforeBody = true;
    try {
      const load = deps.load.verdict(route.key(ctx));
      if (!load.admit) throw new RefusedError(route.name === 'events' ? 503 : load.status, load.reason, REFUSAL_WORDS[load.reason], load.retryAfter);
      if (route.category) {
        project = await projectOf(ctx, route);
        const verdict = project ? deps.quotas.peek(project._id, quotasOf(project.quotas), route.category) : { admit: true as const };
        if (!verdict.admit) throw new QuotaRefusedError(verdict.reason, verdict.retryAfter, route.category);
      }
      beforeBody = false;
      await next();
    } catch (err) {
      if (!(err instanceof RefusedError)) throw err;
      // a refusal made from the body (a quota, spike protection) says the same to a Sentry SDK; one made here is
      // also counted here (the route counts its own)
      if (route.sentry) ctx.set('X-Sentry-Rate-Limits', sentryRateLimits(err.retryAfter, err.reason, err.categories, err.scope));
      if (beforeBody) {
        deps.metrics.refused.inc({ route: route.name, reason: err.reason });
        project ??= await projectOf(ctx, route);
        if (project) deps.stats.record(project._id, 'dropped', route.type, err.reason);
      }
      throw err;
    }
  };
}

const REFUSAL_WORDS: Record<AdmissionReason, string> = {
  ingest_backlog: 'Lookout is taking in more than it can write; retry shortly',
  ingest_slow: 'writes are slow right now; retry shortly',
  event_loop: 'Lookout is busy; retry shortly',
  busy: 'Lookout is taking fewer requests while it is busy; retry shortly',
  queue_depth: 'the processing queue is deep; retry shortly',
  redis_memory: 'Redis is near its maxmemory; nothing more is taken until memory is freed',
  disk_floor: "the data folder's disk is under its free-space floor; nothing more is taken until space is freed",
};
