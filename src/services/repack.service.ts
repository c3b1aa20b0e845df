/**
 * Repacking sign-in attempts (issue 25), run by the scheduled
 * `maintenance.repack` job. The API stores a group's attempts as one document
 * per project, a few attempts each at high rates, so each document's own
 * fields cost more disk than the attempts: about 580 bytes an attempt at
 * 800/s. Once a minute of groups is over (and `REPACK_AFTER_MS` more), the
 * repacker rewrites that minute's groups of a project as parts of some 5,000
 * attempts (src/store/attempts.store.ts), some 40 bytes each, and deletes
 * the groups' documents.
 *
 * The groups to rewrite are listed in Redis (`rp`, added when a worker
 * applies the group, src/state/scripts/apply-events-4.lua), so nothing scans
 * the attempts. A group still on the backlog (its job may read it back by its
 * id) keeps its document, as does one a lost Redis no longer lists: both are
 * read as before, they only take more room.
 */
import type { Logger } from '../log.ts';
import type { IssuesState } from '../state/issues.state.ts';
import type { Stores } from '../store/index.ts';

/** How long after its minute ends a minute of groups is repacked: its jobs have long been applied by then. */
export const REPACK_AFTER_MS = 60_000;

export interface RepackDeps {
  stores: Pick<Stores, 'events' | 'projects'>;
  issuesState: IssuesState;
  log: Logger;
}

/** Repacks every minute of groups that is due, project by project, for up to `budgetMs`; returns what it did. */
export async function repackAttempts(deps: RepackDeps, now: Date, opts: { budgetMs: number } = { budgetMs: 20_000 }) {
  const { attempts, backlog } = deps.stores.events;
  const done = { minutes: 0, groups: 0 };
  const started = Date.now();
  for (const project of await deps.stores.projects.list()) {
    for (;;) {
      if (Date.now() - started > opts.budgetMs) return done;
      const due = await deps.issuesState.repackDue(project._id, now.getTime() - REPACK_AFTER_MS);
      if (!due) break;
      const waiting = await backlog.waiting(due.groups);
      done.groups += await attempts.repack(project._id, due.bucket, due.groups.filter((group) => !waiting.has(group)));
      await deps.issuesState.repacked(project._id, due.groups);
      done.minutes += 1;
    }
  }
  if (done.minutes > 0) deps.log.info(done, 'repacked sign-in attempts');
  return done;
}
