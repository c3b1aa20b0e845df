/**
 * The maintenance jobs, which carry no payload:
 *
 * - `maintenance.retention` (hourly) deletes what is past retention. Raw session batches older than 90 days
 *   (MongoDB's TTL index does the same; FerretDB expires none, so this job is what enforces it there); rollups stay,
 *   and Redis expires session states itself after the update window. Error events and sign-in attempts older than
 *   their project's retention (src/services/retention.service.ts); issues keep their counters. Source map bundles
 *   older than their project's retention, and chunks no bundle uses.
 * - `maintenance.repack` (every 15 s) repacks the sign-in attempts of each minute that is over and deletes the raw
 *   session batches that parts hold (src/services/repack.service.ts), both at once, each under its own lease.
 *   `signal` aborts when the worker stops: a run resting between minutes stops resting.
 */
import type { Config } from '../../config/index.ts';
import type { Logger } from '../../src/log.ts';
import { deleteRepackedSessions, repackAttempts } from '../../src/services/repack.service.ts';
import type { MonitorsService } from '../../src/services/monitors.service.ts';
import type { PerfRollup } from '../../src/services/perf-rollup.service.ts';
import { expireEvents, RETENTION_CHUNKS, type RetentionOptions } from '../../src/services/retention.service.ts';
import type { SourcemapsService } from '../../src/services/sourcemaps.service.ts';
import type { IssuesState } from '../../src/state/issues.state.ts';
import type { StateKeeper } from '../../src/state/rebuild.ts';
import type { SessionState } from '../../src/state/sessions.state.ts';
import type { Stores } from '../../src/store/index.ts';

/** What the retention handler uses, and nothing else. */
export interface RetentionDeps {
  stores: Stores;
  log: Logger;
  config: Pick<Config, 'eventRetentionDays'>;
  issuesState: IssuesState;
  keeper: StateKeeper;
  sourcemaps: Pick<SourcemapsService, 'expire'>;
  monitors: Pick<MonitorsService, 'expire'>;
  perfRollup: Pick<PerfRollup, 'expire'>;
}

export async function runRetention(runtime: RetentionDeps, now: Date, opts: RetentionOptions = RETENTION_CHUNKS): Promise<Record<string, number>> {
  const sessions = await runtime.stores.sessions.deleteExpired(now);
  runtime.log.info({ deleted: sessions }, 'retention removed expired session data');
  const deps = {
    stores: runtime.stores,
    issuesState: runtime.issuesState,
    keeper: runtime.keeper,
    defaultDays: runtime.config.eventRetentionDays,
    log: runtime.log,
  };
  return {
    ...sessions,
    ...(await expireEvents(deps, now, opts)),
    ...(await runtime.sourcemaps.expire(now, runtime.config.eventRetentionDays)),
    ...(await runtime.monitors.expire(now, runtime.config.eventRetentionDays)),
    ...(await runtime.perfRollup.expire(now)),
  };
}

/** What the repack handler uses, and nothing else. */
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
