/**
 * Digesting a `sessions.process` job (src/queues/jobs/sessions.job.ts): the raw batches of one job applied to the hot
 * state in Redis, batch by batch:
 *
 * 1. read: the batch from the job (the API's jobs) or from MongoDB (the sweeper's, by id);
 * 2. apply: each project's part in chunks of a few dozen entries, one script call each
 *    (src/state/scripts/merge-sessions-4.lua), on a verified state; the script records each chunk in the same atomic
 *    step, so a retry, a duplicate delivery or two workers on one batch change nothing twice;
 * 3. hold: the batch kept for the worker's next part (src/services/session-parts.ts);
 * 4. note: the batch marked applied; the flusher (src/state/flusher.ts) then copies the changed rollups to MongoDB
 *    and takes it off the backlog.
 */
import type { Metrics } from '../../src/metrics/metrics.ts';
import type { SessionsProcessPayload } from '../../src/queues/jobs/sessions.job.ts';
import type { PartWriter } from '../../src/services/session-parts.ts';
import { partsOf, type StateKeeper } from '../../src/state/rebuild.ts';
import type { SessionState } from '../../src/state/sessions.state.ts';
import type { Stores } from '../../src/store/index.ts';
import { batchOfJob } from '../../src/store/sessions.store.ts';

/** What the handler uses, and nothing else. */
export interface SessionsProcessDeps {
  sessionState: SessionState;
  keeper: StateKeeper;
  metrics: Metrics;
  stores: Pick<Stores, 'sessions'>;
  sessionParts: PartWriter;
}

export async function processSessionBatches(payload: SessionsProcessPayload, runtime: SessionsProcessDeps, now: Date) {
  const { sessionState: state, keeper, metrics } = runtime;
  const totals = { batches: 0, projects: 0, changed: 0, unchanged: 0, skipped: 0 };
  for (const entry of payload.batches) {
    // The API's jobs carry the batches (jobs added before the job form carry them whole); the sweeper's only their ids.
    const batch = 'packed' in entry ? batchOfJob(entry) : (entry.batch ?? (await runtime.stores.sessions.getBatch(entry.id)));
    if (!batch) {
      // A backlog marker whose batch was never written: the API failed between the two and answered no one.
      await runtime.stores.sessions.backlog.finish([entry.id]);
      continue;
    }
    const receivedAt = new Date(batch.received_at);
    const parts = partsOf(batch);
    for (const [project, part] of parts) {
      const result = await keeper.withVerified(project, now, 'its verification', () => state.apply(project, batch._id, receivedAt, part));
      totals.changed += result.changed;
      totals.unchanged += result.unchanged;
      totals.skipped += result.skipped;
    }
    await runtime.sessionParts.add(batch);
    await state.pending.noteApplied([...parts.keys()], batch._id);
    totals.batches += 1;
    totals.projects += parts.size;
  }
  metrics.ingest('session', 'duplicated', totals.unchanged);
  return totals;
}
