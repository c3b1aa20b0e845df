/**
 * What event retention deleted, kept so that issues keep their counts.
 *
 * An issue's counters live in Redis and are copied to MongoDB; a rebuild
 * (a Redis that lost its state, or `lookout admin recount`) counts them
 * again from the stored events. Once retention has deleted some of those,
 * the recount adds each issue's tally here: how many of its events were
 * deleted, and by which release, environment and company (its spread).
 *
 * Deleting a chunk spans several writes, so it is journalled: the chunk's
 * ids and tallies are written first (`retention_journal`), then the events
 * deleted, the tallies added, and the journal entry removed. A run that
 * died on the way finishes the chunk at its next start (each step may run
 * twice: deleting is idempotent, and a tally records the last chunk it took).
 * Only the retention job writes here, one chunk at a time.
 */
import type { Db } from 'mongodb';
import { isDuplicateKey } from './mongo.ts';

/** One issue's share of a chunk: its deleted events and their spread (`r:<release>`, `e:<environment>`, `c:<company>`). */
export interface TallyChange {
  issue: number;
  project_id: number;
  /** event ids (without the project), as the issue's event list in Redis holds them */
  events: string[];
  /** (FerretDB v1 stores no nested arrays, and a release may hold dots: no field names either) */
  spread: Spread;
}

export type Spread = { key: string; n: number }[];

export interface ExpiredTally {
  /** the issue */
  _id: number;
  project_id: number;
  count: number;
  spread: Spread;
  /** the last chunk added */
  chunk: string;
}

export interface RetentionChunk {
  _id: string;
  /** the events' `_id`s */
  ids: string[];
  tallies: TallyChange[];
}

export function makeExpiredStore(db: Db) {
  const tallies = db.collection<ExpiredTally>('issue_expired');
  const journal = db.collection<RetentionChunk>('retention_journal');
  return {
    /** A project's tallies, and the changes of a chunk not finished yet (recount only: scans a small collection). */
    async ofProject(project: number): Promise<Map<number, { count: number; spread: Map<string, number> }>> {
      const out = new Map<number, { count: number; spread: Map<string, number> }>();
      const add = (issue: number, count: number, spread: Spread) => {
        const t = out.get(issue) ?? { count: 0, spread: new Map<string, number>() };
        t.count += count;
        for (const { key, n } of spread) t.spread.set(key, (t.spread.get(key) ?? 0) + n);
        out.set(issue, t);
      };
      const [done, open] = await Promise.all([tallies.find({ project_id: project }).toArray(), journal.find({}).toArray()]);
      for (const t of done) add(t._id, t.count, t.spread);
      const taken = new Map(done.map((t) => [t._id, t.chunk]));
      for (const chunk of open) {
        for (const c of chunk.tallies) if (c.project_id === project && taken.get(c.issue) !== chunk._id) add(c.issue, c.events.length, c.spread);
      }
      return out;
    },
    /** Chunks a run started and did not finish. */
    unfinished(): Promise<RetentionChunk[]> {
      return journal.find({}).toArray();
    },
    async begin(chunk: RetentionChunk): Promise<void> {
      await journal.insertOne(chunk);
    },
    /** Adds the chunk's change to the issue's tally, once. */
    async add(chunk: string, change: TallyChange): Promise<void> {
      const current = await tallies.findOne({ _id: change.issue });
      if (current?.chunk === chunk) return;
      const spread = new Map((current?.spread ?? []).map(({ key, n }) => [key, n]));
      for (const { key, n } of change.spread) spread.set(key, (spread.get(key) ?? 0) + n);
      const next: ExpiredTally = {
        _id: change.issue,
        project_id: change.project_id,
        count: (current?.count ?? 0) + change.events.length,
        spread: [...spread].map(([key, n]) => ({ key, n })),
        chunk,
      };
      try {
        await tallies.replaceOne({ _id: change.issue, chunk: { $ne: chunk } }, next, { upsert: true });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err; // taken meanwhile by a run finishing the same chunk
      }
    },
    async end(chunk: string): Promise<void> {
      await journal.deleteOne({ _id: chunk });
    },
  };
}
export type ExpiredStore = ReturnType<typeof makeExpiredStore>;
