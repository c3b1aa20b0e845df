/**
 * sessions.process: merges one raw batch into sessions and release rollups.
 * Each project's part runs under the project's Redis lock (FerretDB v1 loses
 * concurrent updates to one document) and commits through the project's
 * journal (src/store/sessions.store.ts), so a retry, a duplicate delivery,
 * several workers or a worker killed mid-batch leave rollups equal to a
 * recount.
 */
import { keys, planMerge, touchedKeys, writeCount } from '../src/domain/release-health.ts';
import type { AggregateUpdate, SessionUpdate } from '../src/domain/sessions.ts';
import type { Runtime } from '../src/runtime.ts';
import { mergeState, type RawRequest } from '../src/store/sessions.store.ts';

export async function processSessionBatch(id: string, runtime: Runtime, now: Date): Promise<{ projects: number; writes: number }> {
  const store = runtime.stores.sessions;
  const batch = await store.getBatch(id);
  // Merged and archived already (a duplicate delivery, or the sweeper re-added it).
  if (!batch) {
    if ((await store.raw.countDocuments({ _id: id }, { limit: 1 })) > 0) return { projects: 0, writes: 0 };
    // A job exists only for a stored batch: a miss is a write not yet visible here; retry.
    throw new Error(`session batch ${id} not found yet`);
  }
  let writes = 0;
  const byProject = groupByProject(batch._id, batch.requests);
  for (const [project, part] of byProject) {
    writes += await runtime.lockProject(project, () => mergeProject(runtime, project, part.sessions, part.aggregates, now));
  }
  await store.archiveBatch(batch);
  return { projects: byProject.size, writes };
}

/** Each aggregate gets the id `<batch>:<request>:<item>`, which makes applying it idempotent. */
function groupByProject(batchId: string, requests: RawRequest[]) {
  const out = new Map<number, { sessions: SessionUpdate[]; aggregates: { id: string; update: AggregateUpdate }[] }>();
  requests.forEach((request, r) => {
    let part = out.get(request.project_id);
    if (!part) out.set(request.project_id, (part = { sessions: [], aggregates: [] }));
    part.sessions.push(...request.sessions);
    request.aggregates.forEach((update, i) => part!.aggregates.push({ id: `${batchId}:${r}:${i}`, update }));
  });
  return out;
}

/** Under the project lock: finish a merge a killed worker left, then merge this part. */
async function mergeProject(
  runtime: Runtime,
  project: number,
  sessions: SessionUpdate[],
  aggregates: { id: string; update: AggregateUpdate }[],
  now: Date,
): Promise<number> {
  const store = runtime.stores.sessions;
  if (await store.recover(project)) runtime.log.warn({ project }, 'applied the journal of an interrupted session merge');
  const loaded = await store.load(
    [...new Set(sessions.map((s) => keys.session(project, s.sid)))],
    aggregates.map((a) => a.id),
  );
  const stored = new Map(loaded.sessions.map((d) => [d._id, d]));
  const touched = touchedKeys(project, stored, sessions, aggregates.map((a) => a.update));
  const state = mergeState(loaded, await store.loadRollups(touched));
  const existing = new Set([...state.sessions.keys(), ...state.aggregates, ...state.users.keys(), ...state.hours.keys(), ...state.releases.keys()]);
  const stats = { unchanged: 0 };
  const writes = planMerge(project, state, sessions, aggregates, now, stats);
  runtime.metrics.ingest('session', 'duplicated', stats.unchanged);
  if (writeCount(writes) === 0) return 0;
  await store.commit(project, writes, existing, now);
  return writeCount(writes);
}
