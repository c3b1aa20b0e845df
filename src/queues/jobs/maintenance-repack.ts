/**
 * The `maintenance.repack` job (scheduled every 15 s): repacks the sign-in attempts of each minute that is over and
 * deletes the raw session batches that parts hold (src/services/repack.service.ts), both at once, each under its
 * own lease. `signal` aborts when the worker stops: a run resting between minutes stops resting.
 */
import type { Logger } from '../../log.ts';
import { deleteRepackedSessions, repackAttempts } from '../../services/repack.service.ts';
import type { IssuesState } from '../../state/issues.state.ts';
import type { SessionState } from '../../state/sessions.state.ts';
import type { Stores } from '../../store/index.ts';

/** What the handler uses, and nothing else. */
export interface RepackJobDeps {
  stores: Stores;
  issuesState: IssuesState;
  sessionState: SessionState;
  log: Logger;
}

export async function runRepack(deps: RepackJobDeps, now: Date, signal?: AbortSignal) {
  const [attempts, sessions] = await Promise.all([
    repackAttempts({ stores: deps.stores, issuesState: deps.issuesState, log: deps.log }, now, { signal }),
    deleteRepackedSessions({ stores: deps.stores, state: deps.sessionState, log: deps.log }, now, { signal }),
  ]);
  return { attempts, sessions };
}
