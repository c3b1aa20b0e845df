/**
 * Repacking (issue 25), run by the scheduled `maintenance.repack` job: what
 * the API stores in small documents, to answer each request quickly, is
 * rewritten once its minute is over (and `REPACK_AFTER_MS` more) as parts of
 * a minute, and the small documents deleted. Caught up, each repacker spreads
 * its work over `REPACK_SPREAD_MS`, so ingestion's writes seldom wait behind it.
 *
 * - Sign-in attempts: the API stores a group's attempts as one document per
 *   project, a few attempts each at high rates, so each document's own fields
 *   cost more disk than the attempts: about 580 bytes an attempt at 800/s.
 *   A minute's groups of a project become parts of some 5,000 attempts
 *   (src/store/attempts.store.ts), some 40 bytes each.
 * - Raw session batches: a batch is what one API wrote at once, often one
 *   request of some 4 KB, and FerretDB's 8 KB pages hold one such row, half
 *   empty. The worker that applies them copies them into parts of about
 *   60 KB as it goes (src/services/session-parts.ts); here their own
 *   documents are deleted, without reading them.
 *
 * What to do is listed in Redis (src/state/repack-list.ts), added when a
 * worker applies the group or writes the part, so nothing scans the
 * collections. One still on the backlog (its job may read it back by its id)
 * keeps its document, as does one a lost Redis no longer lists: both are read
 * as before, they only take more room.
 */
import type { Logger } from '../log.ts';
import type { IssuesState } from '../state/issues.state.ts';
import type { SessionState } from '../state/sessions.state.ts';
import { makePace, REPACK_BUCKET_MS } from '../store/attempts.store.ts';
import type { Lease } from '../state/lease.ts';
import type { RepackDue } from '../state/repack-list.ts';
import type { Stores } from '../store/index.ts';

/** How long after its minute ends a minute of groups is repacked: its jobs have long been applied by then. */
export const REPACK_AFTER_MS = 60_000;

/**
 * How long the repacker spreads its work over when only the latest minute is due: half the time until the next
 * minute is, so it keeps up with a margin. Behind (after a stop, say), it goes at its own pace, within its budget.
 */
export const REPACK_SPREAD_MS = 30_000;

export interface RepackDeps {
  stores: Pick<Stores, 'events' | 'projects'>;
  issuesState: IssuesState;
  log: Logger;
}

export interface SessionRepackDeps {
  stores: Pick<Stores, 'sessions'>;
  state: SessionState;
  log: Logger;
}

export interface RepackOptions {
  /** how long a run behind goes on for (a minute it started is finished) */
  budgetMs?: number;
  /** how long a run caught up spreads its work over */
  spreadMs?: number;
  /**
   * aborts when the worker stops or a backup begins: the run ends the minute it is in, unspread, and stops there (the
   * rest stays listed for the next run)
   */
  signal?: AbortSignal;
}

/**
 * Repacks every minute of groups that is due, project by project; returns what it did. One run at a time: a run that
 * finds another's lease (src/state/issues.state.ts) does nothing.
 */
export async function repackAttempts(deps: RepackDeps, now: Date, opts: RepackOptions = {}) {
  return (await leasedRun(deps.issuesState.takeRepackLease, opts, (run) => repackMinutes(deps, now, run))) ?? { minutes: 0, groups: 0 };
}

type Run = { budgetMs: number; spreadMs: number; signal?: AbortSignal };

/** Runs `run` holding a repacker's lease; null when another run holds it. */
async function leasedRun<T>(take: (ms: number) => Promise<Lease | null>, opts: RepackOptions, run: (opts: Run) => Promise<T>): Promise<T | null> {
  const { budgetMs = 20_000, spreadMs = REPACK_SPREAD_MS } = opts;
  // Long enough for the longest run (spread, or budget and the minute it began); a dead run's lease runs out.
  const lease = await take(spreadMs + budgetMs + 60_000);
  if (!lease) return null;
  try {
    return await run({ budgetMs, spreadMs, signal: opts.signal });
  } finally {
    await lease.end();
  }
}

/** Asked to stop (the worker stopping, a backup beginning), a run ends with the minute it is in; asked before, after one. */
const stopped = (opts: Run, done: { minutes: number }) => opts.signal?.aborted === true && done.minutes > 0;

async function repackMinutes(deps: RepackDeps, now: Date, opts: Run) {
  const { attempts, backlog } = deps.stores.events;
  const done = { minutes: 0, groups: 0 };
  const started = Date.now();
  const before = now.getTime() - REPACK_AFTER_MS;
  const projects = await deps.stores.projects.list();
  const first = new Map<number, RepackDue>();
  for (const project of projects) {
    const due = await deps.issuesState.repackList(project._id).due(before);
    if (due) first.set(project._id, due);
  }
  // Caught up, each project has at most the latest minute due, and the run spreads it out.
  const latest = Math.floor(before / REPACK_BUCKET_MS) - 1;
  const caughtUp = [...first.values()].every((due) => due.bucket === latest);
  const units = [...first.values()].reduce((sum, due) => sum + 2 * due.ids.length, 0); // each group read, then deleted
  const paced = makePace({ spread: caughtUp ? { ms: opts.spreadMs, units } : undefined, signal: opts.signal });
  for (const project of projects) {
    const list = deps.issuesState.repackList(project._id);
    for (let due = first.get(project._id) ?? null; due; due = await list.due(before)) {
      if ((!caughtUp && Date.now() - started > opts.budgetMs) || stopped(opts, done)) return done;
      const waiting = await backlog.waiting(due.ids);
      done.groups += await attempts.repack(project._id, due.bucket, due.ids.filter((group) => !waiting.has(group)), paced);
      await list.done(due.ids);
      done.minutes += 1;
    }
  }
  if (done.minutes > 0) deps.log.info(done, 'repacked sign-in attempts');
  return done;
}

/**
 * Deletes the documents of the raw session batches that parts hold (src/services/session-parts.ts), a minute at a
 * time, oldest first; returns what it did. One run at a time, as for attempts.
 */
export async function deleteRepackedSessions(deps: SessionRepackDeps, now: Date, opts: RepackOptions = {}) {
  return (await leasedRun(deps.state.takeRepackLease, opts, (run) => deleteParted(deps, now, run))) ?? { minutes: 0, batches: 0 };
}

async function deleteParted(deps: SessionRepackDeps, now: Date, opts: Run) {
  const { sessions } = deps.stores;
  const list = deps.state.partedList;
  const done = { minutes: 0, batches: 0 };
  const started = Date.now();
  const before = now.getTime() - REPACK_AFTER_MS;
  let due = await list.due(before);
  const caughtUp = due?.bucket === Math.floor(before / REPACK_BUCKET_MS) - 1;
  const paced = makePace({ spread: caughtUp ? { ms: opts.spreadMs, units: due!.ids.length } : undefined, signal: opts.signal });
  for (; due; due = await list.due(before)) {
    if ((!caughtUp && Date.now() - started > opts.budgetMs) || stopped(opts, done)) break;
    const waiting = await sessions.backlog.waiting(due.ids);
    done.batches += await sessions.deleteBatches(due.ids.filter((id) => !waiting.has(id)), paced);
    await list.done(due.ids);
    done.minutes += 1;
  }
  if (done.minutes > 0) deps.log.info(done, 'deleted raw session batches their parts hold');
  return done;
}
