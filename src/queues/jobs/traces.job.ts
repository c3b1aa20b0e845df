/**
 * The `traces.process` job, as both sides see it: the groups of transactions, vitals and log lines stored together
 * (the API's jobs carry them, the sweeper's only each group's id) and the job's dedupe id. The API's group commit
 * writes it (src/services/traces.service.ts); the worker digests it (workers/digest/traces.ts).
 */
import type { JobTraces } from '../../store/traces.store.ts';

export interface TracesProcessPayload {
  groups: (JobTraces | { id: string })[];
}

/** The job of the groups written together is named by the first group's id: a second enqueue of it is a no-op. */
export function tracesJobId(id: string): string {
  return `tg-${id}`;
}
