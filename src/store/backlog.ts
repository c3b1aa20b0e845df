/**
 * A backlog: one small marker per group of raw entries the API stores
 * (a session batch, an events group), written before the group and deleted
 * by the flusher once the group's effects are durable in MongoDB. The
 * sweeper and the lag metric read only this collection, never the raw ones.
 *
 * Markers are written ahead, several in one insert. On FerretDB every
 * statement is a commit of its own, and a marker written per group made two
 * commits of each: at 1,000 events/s about 400 groups a second, the one
 * writer busy 96% of the time (docs/decisions.md). A group takes a marker
 * written before it arrived, so its marker is never younger than it is: the
 * sweeper's grace and the lag metric count from no later than the group.
 * Each insert writes about `aheadMs` worth of markers at the rate groups
 * were taken lately (one at low rates, as before). A marker is handed out
 * within `maxAgeMs` of being written or deleted, and what is left when
 * groups stop coming is deleted after `idleMs`. A marker left behind by a
 * process that died is swept like any marker whose group was never
 * written: the worker finds no entries and drops it.
 */
import type { Db } from 'mongodb';
import { newGroupId } from '../util/group-commit.ts';
import { ensureIndexes } from './mongo.ts';

export interface Marker {
  _id: string;
  received_at: Date;
}

export interface WriteAhead {
  /** how far ahead markers are written, at the rate groups came in since the last insert */
  aheadMs: number;
  /** most markers written in one insert */
  maxAhead: number;
  /** a marker written longer ago than this is deleted, not handed out: the sweeper's grace counts from it */
  maxAgeMs: number;
  /** markers not taken for this long are deleted: the groups stopped */
  idleMs: number;
}

export const WRITE_AHEAD: WriteAhead = { aheadMs: 50, maxAhead: 64, maxAgeMs: 1000, idleMs: 100 };

export function makeBacklog(db: Db, name: string, opts: WriteAhead = WRITE_AHEAD) {
  const markers = db.collection<Marker>(name);
  /** Written, not handed out yet, oldest first, each with when its insert ended. */
  const ready: { marker: Marker; written: number }[] = [];
  let writing: Promise<void> | null = null;
  /** The last insert: when it began, and how many markers have been taken since. */
  let lastWrite = { at: 0, taken: 0 };
  let idle: NodeJS.Timeout | null = null;

  async function writeAhead(): Promise<void> {
    const now = Date.now();
    const perMs = lastWrite.taken / Math.max(now - lastWrite.at, 1);
    const count = Math.min(opts.maxAhead, Math.max(1, Math.ceil(perMs * opts.aheadMs)));
    const docs = Array.from({ length: count }, () => ({ _id: newGroupId(), received_at: new Date(now) }));
    await markers.insertMany(docs);
    lastWrite = { at: now, taken: 0 };
    const written = Date.now();
    ready.push(...docs.map((marker) => ({ marker, written })));
  }

  async function remove(ids: string[]): Promise<void> {
    if (ids.length > 0) await markers.deleteMany({ _id: { $in: ids } });
  }
  const idsOf = (unused: { marker: Marker }[]) => unused.map((u) => u.marker._id);

  /** Deletes the markers not handed out. */
  async function release(): Promise<void> {
    if (idle) clearTimeout(idle);
    idle = null;
    await remove(idsOf(ready.splice(0)));
  }

  return {
    collection: markers,
    async ensureIndexes(): Promise<void> {
      await ensureIndexes(markers, [{ key: { received_at: 1 }, name: 'received_at' }]);
    },

    /** A durable marker for the next group; its id is the group's. */
    async take(): Promise<Marker> {
      const now = Date.now();
      const fresh = ready.findIndex((r) => now - r.written < opts.maxAgeMs);
      await remove(idsOf(ready.splice(0, fresh === -1 ? ready.length : fresh))).catch(() => {}); // else the sweeper drops them
      while (ready.length === 0) {
        writing ??= writeAhead().finally(() => (writing = null));
        await writing;
      }
      lastWrite.taken += 1;
      if (idle) clearTimeout(idle);
      // A delete that fails leaves the markers to the sweeper, as a process that died would.
      idle = setTimeout(() => void release().catch(() => {}), opts.idleMs).unref();
      return ready.shift()!.marker;
    },
    /** Deletes the markers written ahead and not taken (shutdown). */
    release,

    /** The groups' effects are durable in MongoDB: take them off the backlog. */
    finish: remove,
    /** When the oldest group not flushed yet was received, at the latest (null: none waits). */
    async oldest(): Promise<Date | null> {
      const [oldest] = await markers.find({}).sort({ received_at: 1 }).limit(1).toArray();
      return oldest?.received_at ?? null;
    },
    /** Markers written before `olderThan` (the sweeper's). */
    olderThan(olderThan: Date, limit: number): Promise<Pick<Marker, '_id'>[]> {
      return markers.find({ received_at: { $lt: olderThan } }, { projection: { _id: 1 } }).limit(limit).toArray();
    },
    /** Which of the groups are still on the backlog (read by `_id`, 1,000 at a time). */
    async waiting(ids: string[]): Promise<Set<string>> {
      const found = new Set<string>();
      for (let i = 0; i < ids.length; i += 1000) {
        for (const marker of await markers.find({ _id: { $in: ids.slice(i, i + 1000) } }, { projection: { _id: 1 } }).toArray()) found.add(marker._id);
      }
      return found;
    },
    size(): Promise<number> {
      return markers.countDocuments({});
    },
  };
}
export type Backlog = ReturnType<typeof makeBacklog>;
