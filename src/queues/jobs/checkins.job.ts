/**
 * The `checkins.process` job, as both sides see it: the groups of check-ins stored together (the API's jobs carry
 * them, the sweeper's only each group's id) and the job's dedupe id. The API's group commit writes it
 * (src/services/checkins.service.ts); the worker digests it (workers/digest/checkins.ts).
 */
import type { JobCheckIns } from '../../store/checkins.store.ts';

export interface CheckInsProcessPayload {
  groups: (JobCheckIns | { id: string })[];
}

/** The job of the groups written together is named by the first group's id: a second enqueue of it is a no-op. */
export function checkInsJobId(id: string): string {
  return `cg-${id}`;
}
