/**
 * maintenance.retention (scheduled hourly): removes sessions, aggregates and
 * raw batches older than 90 days, and hourly user states of expired hours.
 * MongoDB's TTL indexes do the same; FerretDB does not expire TTL indexes, so
 * this job is what enforces retention there. Rollups stay.
 */
import type { Runtime } from '../src/runtime.ts';

export async function runRetention(runtime: Runtime, now: Date): Promise<Record<string, number>> {
  const deleted = await runtime.stores.sessions.deleteExpired(now);
  runtime.log.info({ deleted }, 'retention removed expired session data');
  return deleted;
}
