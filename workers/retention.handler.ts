/**
 * maintenance.retention (scheduled hourly): removes raw session batches
 * older than 90 days. MongoDB's TTL index does the same; FerretDB does not
 * expire TTL indexes, so this job is what enforces retention there. Rollups
 * stay, and Redis expires session states itself after the update window.
 */
import type { Runtime } from '../src/runtime.ts';

export async function runRetention(runtime: Runtime, now: Date): Promise<Record<string, number>> {
  const deleted = await runtime.stores.sessions.deleteExpired(now);
  runtime.log.info({ deleted }, 'retention removed expired session data');
  return deleted;
}
