/**
 * The `sessions.process` job's payload: raw session batches, each carried in its stored form (deflated, as the
 * store wrote it) or, from the sweeper, by its id only; and the job's dedupe id. The API's group commit writes it
 * (src/services/sessions.service.ts); workers/sessions-process.handler.ts reads it back.
 */
import type { JobBatch, SessionBatchDoc } from '../../store/sessions.store.ts';

export interface SessionsProcessPayload {
  batches: ({ id: string; batch?: SessionBatchDoc } | JobBatch)[];
}

/** The job of the batches written together is named by the first batch's id: a second enqueue of it is a no-op. */
export function batchJobId(id: string): string {
  return `sb-${id}`;
}
