/**
 * The `sessions.process` job, as both sides see it: its payload (raw session batches, each carried in its stored
 * form, deflated as the store wrote it, or, from the sweeper, by its id only) and its dedupe id. The API's group
 * commit writes it (src/services/sessions.service.ts); the worker digests it (workers/digest/sessions.ts).
 */
import type { JobBatch, SessionBatchDoc } from '../../store/sessions.store.ts';

export interface SessionsProcessPayload {
  batches: ({ id: string; batch?: SessionBatchDoc } | JobBatch)[];
}

/** The job of the batches written together is named by the first batch's id: a second enqueue of it is a no-op. */
export function batchJobId(id: string): string {
  return `sb-${id}`;
}
