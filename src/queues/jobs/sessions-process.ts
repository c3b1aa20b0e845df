/**
 * The `sessions.process` job: its payload (raw session batches, each carried in its stored form, deflated as the
 * store wrote it, or, from the sweeper, by its id only), its dedupe id and its handler. The API's group commit writes
 * it (src/services/sessions.service.ts).
 *
 * sessions.process: applies the raw batches of one job to the hot state in
 * Redis, each project's part of a batch in chunks of a few dozen entries, one
 * script call each (src/state/scripts/merge-sessions-4.lua). The API gathers
 * the batches it stored over a few milliseconds into one job
 * (src/queues/gather.ts). The script records each chunk in the same atomic
 * step, so a retry, a duplicate delivery or two workers on one batch change
 * nothing twice. The flusher (src/state/flusher.ts) then copies the changed
 * rollups to MongoDB and takes the batches off the backlog. Each batch
 * applied is held for the worker's next part (src/services/session-parts.ts).
 */ import type { Metrics } from '../../metrics/metrics.ts';
import type { PartWriter } from '../../services/session-parts.ts';
import { partsOf, type StateKeeper } from '../../state/rebuild.ts';
import type { SessionState } from '../../state/sessions.state.ts';
import type { Stores } from '../../store/index.ts';
import { batchOfJob, type JobBatch, type SessionBatchDoc } from '../../store/sessions.store.ts';

export interface SessionsProcessPayload {
  batches: ({ id: string; batch?: SessionBatchDoc } | JobBatch)[];
}

/** The job of the batches written together is named by the first batch's id: a second enqueue of it is a no-op. */
export function batchJobId(id: string): string {
  return `sb-${id}`;
}

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
