/**
 * Settled performance buckets kept between reads, in each process that reads them (issue 69: the Performance page
 * at 30 days). A month's window reads about a hundred buckets; each is a document the embedded store converts and
 * this process inflates, half of such a read's time. A bucket that ended a while ago (`splitSettled`,
 * src/domain/perf-buckets.ts) changes only when something arrives late for it or retention forgets it, and whoever
 * does that raises the project's generation (src/state/traces.state.ts, `tgen`): what was kept under another
 * generation is read again. Whatever the generation says, a kept bucket is read again after KEPT_MS, so a writer
 * stopped between its write and its raise, or Redis lost, shows within that time.
 *
 * Kept buckets are frozen: every reader sums them into counts of its own.
 */
import { LRUCache } from 'lru-cache';
import type { Bucket } from '../domain/perf-buckets.ts';
import { BY_IDS_MAX, bucketIds, type BucketDoc, type BucketRead, type Period, type TracesStore } from '../store/traces.store.ts';

const KEPT_MS = 10 * 60_000;
/** About what the kept buckets may take of the process' memory. */
const KEPT_BYTES = 32 * 1024 * 1024;

interface Kept {
  generation: string;
  /** null: the store has no bucket there (nothing was counted in it) */
  b: Bucket | null;
  bytes: number;
}

export function makeBucketCache(store: Pick<TracesStore, 'bucketsByIds'>) {
  const kept = new LRUCache<string, Kept>({ maxSize: KEPT_BYTES, sizeCalculation: (k) => k.bytes, ttl: KEPT_MS });
  return {
    /** A project's settled buckets of a period in [from, to), as kept under `generation` or else read and kept. */
    async read(period: Period, project: number, from: number, to: number, read: BucketRead, generation: string): Promise<BucketDoc[]> {
      const keyOf = (id: string) => `${period}:${read.spans ? 'spans' : 'counts'}:${id}`;
      const out: BucketDoc[] = [];
      const missing: string[] = [];
      for (const id of bucketIds(period, project, from, to)) {
        const k = kept.get(keyOf(id));
        if (k?.generation !== generation) missing.push(id);
        else if (k.b) out.push({ _id: id, b: k.b });
      }
      for (let i = 0; i < missing.length; i += BY_IDS_MAX) {
        const ids = missing.slice(i, i + BY_IDS_MAX);
        const found = new Map((await store.bucketsByIds(period, ids, read)).map((d) => [d._id, d.b]));
        for (const id of ids) {
          const b = found.get(id);
          kept.set(keyOf(id), { generation, b: b ? deepFreeze(b) : null, bytes: 64 + (b ? 2 * JSON.stringify(b).length : 0) });
          if (b) out.push({ _id: id, b });
        }
      }
      return out;
    },
  };
}
export type BucketCache = ReturnType<typeof makeBucketCache>;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
