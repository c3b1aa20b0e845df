/**
 * The `maintenance.retention` job (scheduled hourly): deletes what is past retention.
 * Raw session batches older than 90 days (MongoDB's TTL index does the same;
 * FerretDB expires none, so this job is what enforces it there); rollups
 * stay, and Redis expires session states itself after the update window.
 * Error events and sign-in attempts older than their project's retention
 * (src/services/retention.service.ts); issues keep their counters. Source map
 * bundles older than their project's retention, and chunks no bundle uses.
 */
import type { Config } from '../../../config/index.ts';
import type { Logger } from '../../log.ts';
import { expireEvents, RETENTION_CHUNKS, type RetentionOptions } from '../../services/retention.service.ts';
import type { IssuesState } from '../../state/issues.state.ts';
import type { StateKeeper } from '../../state/rebuild.ts';
import type { Stores } from '../../store/index.ts';
import type { SourcemapsService } from '../../services/sourcemaps.service.ts';

/** What the handler uses, and nothing else. */
export interface RetentionDeps {
  stores: Stores;
  log: Logger;
  config: Pick<Config, 'eventRetentionDays'>;
  issuesState: IssuesState;
  keeper: StateKeeper;
  sourcemaps: Pick<SourcemapsService, 'expire'>;
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
  return { ...sessions, ...(await expireEvents(deps, now, opts)), ...(await runtime.sourcemaps.expire(now, runtime.config.eventRetentionDays)) };
}
