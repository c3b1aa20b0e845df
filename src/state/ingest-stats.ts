/**
 * What each project's ingestion took and left (issue 46): items accepted and
 * dropped, by item type and reason, per hour, so nothing is dropped without a
 * trace. Each API process adds its counts up in memory and writes them once
 * a second (count-ingest-1.lua), so counting costs a request nothing; a
 * process killed loses at most its last second of counts, never an item, and
 * counts Redis could not take are written once it can.
 * Kept 15 days in Redis under the project's prefix: `ing:<hour>`, a hash of
 * JSON [outcome, type, reason] -> count.
 */
import { ingestField, readIngestField } from '../domain/client-keys.ts';
import { isRedisUnavailable, type RedisClient } from '../redis/connect.ts';
import { HOUR_MS, hourIndex } from './issue-hash.ts';
import { projectKeys } from './scripts.ts';

export type IngestOutcome = 'accepted' | 'dropped';

/** How long an hour's counts are kept: the 14 days the dashboard shows, and a day to spare. */
const KEPT_MS = 15 * 24 * HOUR_MS;
/** Most (outcome, type, reason) fields an hour of a project holds; more count as OVERFLOW. */
const MAX_FIELDS = 200;
const OVERFLOW = ingestField('dropped', 'other', 'too_many_kinds');
const FLUSH_MS = 1000;

/** An item type or reason as counted: short lowercase words; anything else is `other`. */
export function countedName(name: string): string {
  return /^[a-z0-9][a-z0-9_.-]{0,39}$/i.test(name) ? name.toLowerCase() : 'other';
}

export interface IngestCounts {
  since: string;
  until: string;
  accepted: Record<string, number>;
  dropped: { type: string; reason: string; count: number }[];
  /** per hour, oldest first: items accepted and dropped */
  hourly: { hour: string; accepted: number; dropped: number }[];
}

export function makeIngestStats(redis: RedisClient, opts: { prefix: string; onDropped?: (type: string, reason: string, n: number) => void }) {
  /** project -> hour -> field -> count, not written yet */
  let pending = new Map<number, Map<number, Map<string, number>>>();
  const hourKey = (project: number, hour: number) => `${projectKeys(opts.prefix, project).base}ing:${hour}`;

  function add(project: number, hour: number, field: string, n: number): void {
    const hours = pending.get(project) ?? new Map<number, Map<string, number>>();
    pending.set(project, hours);
    const fields = hours.get(hour) ?? new Map<string, number>();
    hours.set(hour, fields);
    fields.set(field, (fields.get(field) ?? 0) + n);
  }

  /** Writes what was counted since the last flush; when Redis cannot take it, it is written at the next one. */
  async function flush(): Promise<void> {
    if (pending.size === 0) return;
    const taken = pending;
    pending = new Map();
    const pipe = redis.pipeline() as unknown as { countIngest(...a: (string | number)[]): unknown; exec(): Promise<[Error | null, unknown][] | null> };
    const written: { project: number; hour: number; fields: Map<string, number> }[] = [];
    for (const [project, hours] of taken) {
      for (const [hour, fields] of hours) {
        pipe.countIngest(hourKey(project, hour), KEPT_MS, MAX_FIELDS, OVERFLOW, ...[...fields].flat());
        written.push({ project, hour, fields });
      }
    }
    const errors = await pipe.exec().then(
      (results) => written.map((_, i) => results?.[i]?.[0] ?? null),
      (err: Error) => written.map(() => err),
    );
    written.forEach(({ project, hour, fields }, i) => {
      if (isRedisUnavailable(errors[i])) for (const [field, n] of fields) add(project, hour, field, n);
    });
    const failed = errors.find((err) => err !== null);
    if (failed) throw failed;
  }
  const timer = setInterval(() => void flush().catch(() => {}), FLUSH_MS);
  timer.unref();

  return {
    /** Counts `n` items of `type` of the project, accepted or dropped for `reason`. */
    record(project: number, outcome: IngestOutcome, type: string, reason = '', n = 1, now = new Date()): void {
      if (n <= 0) return;
      const [t, why] = [countedName(type), reason === '' ? '' : countedName(reason)];
      add(project, hourIndex(now), ingestField(outcome, t, why), n);
      if (outcome === 'dropped') opts.onDropped?.(t, why, n);
    },
    flush,

    /** The project's counts over the `hours` hours up to now. */
    async read(project: number, hours: number, now = new Date()): Promise<IngestCounts> {
      const last = hourIndex(now);
      const pipe = redis.pipeline();
      for (let h = last - hours + 1; h <= last; h++) pipe.hgetall(hourKey(project, h));
      const rows = ((await pipe.exec()) ?? []).map(([, hash]) => hash as Record<string, string>);
      const accepted: Record<string, number> = {};
      const dropped = new Map<string, { type: string; reason: string; count: number }>();
      const hourly = rows.map((hash, i) => {
        const row = { hour: new Date((last - hours + 1 + i) * HOUR_MS).toISOString(), accepted: 0, dropped: 0 };
        for (const [field, text] of Object.entries(hash)) {
          const { outcome, type, reason } = readIngestField(field);
          const n = Number(text);
          if (outcome === 'accepted') {
            accepted[type] = (accepted[type] ?? 0) + n;
            row.accepted += n;
          } else {
            const key = ingestField('', type, reason);
            const d = dropped.get(key) ?? { type, reason, count: 0 };
            d.count += n;
            dropped.set(key, d);
            row.dropped += n;
          }
        }
        return row;
      });
      return {
        since: new Date((last - hours + 1) * HOUR_MS).toISOString(),
        until: new Date((last + 1) * HOUR_MS).toISOString(),
        accepted,
        dropped: [...dropped.values()].sort((a, b) => b.count - a.count || a.type.localeCompare(b.type) || a.reason.localeCompare(b.reason)),
        hourly,
      };
    },

    async close(): Promise<void> {
      clearInterval(timer);
      await flush().catch(() => {});
    },
  };
}
export type IngestStats = ReturnType<typeof makeIngestStats>;
