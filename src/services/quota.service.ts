/**
 * The one place a project's quotas and spike protection say no. `take` decides: it counts what is about to be stored
 * against the category's limits, or refuses all of it. `refuseIfOver` counts nothing: it refuses a project that is
 * already over before any work is spent on its request (the admission middleware, where the route says what the
 * request carries; the events' `accept`, where only the body says). A refusal is counted as dropped, by its reason,
 * and answered 429 with Retry-After (and X-Sentry-Rate-Limits on Sentry's routes: the admission middleware).
 */
import { quotasOf, type QuotaCategory, type QuotaVerdict } from '../domain/quotas.ts';
import { QuotaRefusedError } from '../errors.ts';
import type { IngestStats } from '../state/ingest-stats.ts';
import type { QuotaCounter } from '../state/quotas.ts';
import type { ProjectDoc } from '../store/projects.store.ts';

/** What a refusal is counted as: the category's type in the project's ingestion (`event`, `security`, `session`). */
interface Counted {
  category: QuotaCategory;
  type: string;
  now?: Date;
}

export function makeQuotaService(deps: { quotas: QuotaCounter; stats: IngestStats }) {
  function refuseUnless(verdict: QuotaVerdict, project: ProjectDoc, what: Counted, n: number): void {
    if (verdict.admit) return;
    deps.stats.record(project._id, 'dropped', what.type, verdict.reason, n, what.now);
    throw new QuotaRefusedError(verdict.reason, verdict.retryAfter, what.category);
  }

  return {
    /** Whether the project is over the category's quotas now (counting nothing, refusing nothing). */
    over(project: ProjectDoc, category: QuotaCategory): boolean {
      return !deps.quotas.peek(project._id, quotasOf(project.quotas), category).admit;
    },

    /** Refuses a project already over the category's quotas (counting nothing). */
    refuseIfOver(project: ProjectDoc, what: Counted): void {
      const at = (what.now ?? new Date()).getTime();
      refuseUnless(deps.quotas.peek(project._id, quotasOf(project.quotas), what.category, at), project, what, 1);
    },

    /** Counts `n` items against the category's quotas, or refuses them all when they would pass a limit. */
    take(project: ProjectDoc, what: Counted, n: number): void {
      const at = (what.now ?? new Date()).getTime();
      refuseUnless(deps.quotas.take(project._id, quotasOf(project.quotas), what.category, n, at), project, what, n);
    },
  };
}
export type QuotaService = ReturnType<typeof makeQuotaService>;
