/**
 * sessions.process: applies one raw batch to the hot state in Redis, one
 * script call per project (src/state/scripts/merge-sessions-4.lua). The
 * script records the batch id in the same atomic step, so a retry, a
 * duplicate delivery or two workers on one batch change nothing twice. The
 * flusher (src/state/flusher.ts) then copies the changed rollups to MongoDB
 * and takes the batch off the backlog.
 */
import type { JobPayloads } from '../src/queues/registry.ts';
import type { Runtime } from '../src/runtime.ts';
import { partsOf } from '../src/state/rebuild.ts';

export async function processSessionBatch(payload: JobPayloads['sessions.process'], runtime: Runtime, now: Date) {
  const { state, keeper, metrics } = runtime;
  // The API's jobs carry the batch; the sweeper's carry only its id.
  const batch = payload.batch ?? (await runtime.stores.sessions.getBatch(payload.id));
  if (!batch) {
    // A backlog marker whose batch was never written: the API failed between the two and answered no one.
    await runtime.stores.sessions.backlog.finish([payload.id]);
    return { projects: 0 };
  }
  const receivedAt = new Date(batch.received_at);
  const parts = partsOf(batch);
  const totals = { changed: 0, unchanged: 0, skipped: 0 };
  for (const [project, part] of parts) {
    let result = await state.apply(project, batch._id, receivedAt, part);
    if (result.code === 'unverified') {
      await keeper.verify(project, now);
      result = await state.apply(project, batch._id, receivedAt, part);
      if (result.code === 'unverified') throw new Error(`the Redis state of project ${project} changed during its verification; retrying`);
    }
    totals.changed += result.changed;
    totals.unchanged += result.code === 'already_applied' ? part.sessions.length : result.unchanged;
    totals.skipped += result.skipped;
  }
  await state.pending.noteApplied([...parts.keys()], batch._id);
  metrics.ingest('session', 'duplicated', totals.unchanged);
  return { projects: parts.size, ...totals };
}
