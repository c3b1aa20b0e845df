/**
 * Sessions and release rollups.
 *
 * - `session_batches`: raw entries as received and not merged yet (one
 *   document per group of requests the API wrote at once). A worker merges a
 *   batch, copies it to `session_raw` (kept 90 days) and deletes it, so this
 *   collection holds only the backlog: the sweeper and the job's lookup stay
 *   cheap on FerretDB v1, whose SQLite backend scans a collection for every
 *   query.
 * - `sessions`, `session_aggregates`: merged sessions and applied aggregates.
 * - `release_users`: each user's worst status per hour and per release.
 * - `release_hours`, `releases`: the rollups.
 * - `session_heads`: per project, the journal of the merge in progress.
 *
 * All merge writes of a project run under its Redis lock and go through the
 * journal: the full new state of every document is first written into the
 * project's head document (one atomic write), then applied, then cleared.
 * A worker killed between the two leaves the journal, and the next merge of
 * the project applies it again before anything else; so the rollups always
 * equal a recount, without transactions (FerretDB v1 has none).
 */
import type { AnyBulkWriteOperation, Collection, Db, Document, Filter, IndexDescription, OptionalUnlessRequiredId } from 'mongodb';
import { emptyWrites, type AggregateDoc, type HourRollup, type MergeState, type MergeWrites, type ReleaseRollup, type SessionDoc, type UserDoc } from '../domain/release-health.ts';
import type { AggregateUpdate, SessionUpdate } from '../domain/sessions.ts';
import { ensureIndexes, onlyDuplicates } from './mongo.ts';

export const RETENTION_DAYS = 90;
const RETENTION_SECONDS = RETENTION_DAYS * 24 * 3600;

export interface RawRequest {
  project_id: number;
  sessions: SessionUpdate[];
  aggregates: AggregateUpdate[];
}

export interface SessionBatchDoc {
  _id: string;
  received_at: Date;
  requests: RawRequest[];
}

/** A merge's writes: documents new to the store (inserted) and documents that exist (replaced). */
export interface Journal {
  insert: MergeWrites;
  replace: MergeWrites;
}

interface HeadDoc {
  _id: number;
  journal: Journal | null;
  merged_at: Date;
}

const TTL = (field: string, name: string): IndexDescription => ({ key: { [field]: 1 }, name, expireAfterSeconds: RETENTION_SECONDS });

export function makeSessionsStore(db: Db, opts: { ferretdb: boolean }) {
  const batches = db.collection<SessionBatchDoc>('session_batches');
  const raw = db.collection<SessionBatchDoc>('session_raw');
  const sessions = db.collection<SessionDoc>('sessions');
  const aggregates = db.collection<AggregateDoc>('session_aggregates');
  const users = db.collection<UserDoc>('release_users');
  const hours = db.collection<HourRollup>('release_hours');
  const releases = db.collection<ReleaseRollup>('releases');
  const heads = db.collection<HeadDoc>('session_heads');

  /** Inserts documents; one that exists already (a replayed journal) is skipped. */
  async function insert<T extends Document & { _id: unknown }>(collection: Collection<T>, docs: T[]): Promise<void> {
    if (docs.length === 0) return;
    try {
      await collection.insertMany(docs as OptionalUnlessRequiredId<T>[], { ordered: false });
    } catch (err) {
      if (!onlyDuplicates(err)) throw err;
    }
  }
  /** Writes each document's full state; replaying the same writes is harmless. */
  async function replace<T extends Document & { _id: unknown }>(collection: Collection<T>, docs: T[]): Promise<void> {
    if (docs.length === 0) return;
    const ops = docs.map((doc) => ({ replaceOne: { filter: { _id: doc._id }, replacement: doc, upsert: true } }) as AnyBulkWriteOperation<T>);
    await collection.bulkWrite(ops, { ordered: false });
  }
  async function apply(journal: Journal): Promise<void> {
    const each = (write: typeof insert, w: MergeWrites) => [
      write(sessions, w.sessions),
      write(aggregates, w.aggregates),
      write(users, w.users),
      write(hours, w.hours),
      write(releases, w.releases),
    ];
    await Promise.all([...each(insert, journal.insert), ...each(replace, journal.replace)]);
  }
  /**
   * Documents by _id. FerretDB v1 pushes down only `{_id: <string>}`, so there
   * one query per id beats one `$in` (which it filters in Go); MongoDB takes
   * the `$in`.
   */
  async function byIds<T extends Document & { _id: string }>(collection: Collection<T>, ids: string[]): Promise<T[]> {
    if (ids.length === 0) return [];
    if (!opts.ferretdb) return (await collection.find({ _id: { $in: ids } } as Filter<T>).toArray()) as T[];
    const found = (await Promise.all(ids.map((id) => collection.findOne({ _id: id } as Filter<T>)))) as (T | null)[];
    return found.filter((d): d is T => d !== null);
  }

  return {
    batches,
    raw,
    sessions,
    aggregates,
    hours,
    releases,
    async ensureIndexes() {
      // TTL indexes expire on MongoDB; FerretDB v1 does not expire them, so the
      // retention job deletes the same documents on both.
      const ttl = (field: string, name: string) => (opts.ferretdb ? [] : [TTL(field, name)]);
      await ensureIndexes(batches, [{ key: { received_at: 1 }, name: 'received_at' }]);
      await ensureIndexes(raw, [{ key: { received_at: 1 }, name: 'received_at' }, ...ttl('received_at', 'retention')]);
      await ensureIndexes(sessions, [{ key: { project_id: 1, environment: 1, started: 1 }, name: 'env_started' }, { key: { started: 1 }, name: 'started' }, ...ttl('started', 'retention')]);
      await ensureIndexes(aggregates, [{ key: { project_id: 1, environment: 1, started: 1 }, name: 'env_started' }, { key: { started: 1 }, name: 'started' }, ...ttl('started', 'retention')]);
      await ensureIndexes(hours, [{ key: { project_id: 1, environment: 1, release: 1, hour: 1 }, name: 'release_hour' }, { key: { project_id: 1, environment: 1, hour: 1 }, name: 'env_hour' }]);
      await ensureIndexes(releases, [{ key: { project_id: 1, last_seen: -1 }, name: 'project_last_seen' }]);
      await ensureIndexes(users, [{ key: { hour: 1 }, name: 'hour' }]);
    },

    /** One journaled insert for a group of requests. */
    async insertBatches(docs: SessionBatchDoc[]): Promise<void> {
      await batches.insertMany(docs, { ordered: true });
    },
    async getBatch(id: string): Promise<SessionBatchDoc | null> {
      return (await byIds(batches, [id]))[0] ?? null;
    },
    /** The batch is merged: keep it as raw entries for 90 days and take it off the backlog. */
    async archiveBatch(batch: SessionBatchDoc): Promise<void> {
      await insert(raw, [batch]);
      await batches.deleteOne({ _id: batch._id });
    },
    /** When the oldest batch not merged yet was received (null: the backlog is empty). */
    async oldestUnprocessed(): Promise<Date | null> {
      const [oldest] = await batches.find({}, { projection: { received_at: 1 } }).sort({ received_at: 1 }).limit(1).toArray();
      return oldest?.received_at ?? null;
    },
    unprocessedBatches(olderThan: Date, limit: number): Promise<Pick<SessionBatchDoc, '_id'>[]> {
      return batches.find({ received_at: { $lt: olderThan } }, { projection: { _id: 1 } }).limit(limit).toArray();
    },
    backlog(): Promise<number> {
      return batches.estimatedDocumentCount();
    },

    /** The stored state a merge reads, by id. */
    async load(sessionIds: string[], aggregateIds: string[]) {
        const [s, a] = await Promise.all([byIds(sessions, sessionIds), byIds(aggregates, aggregateIds)]);
      return { sessions: s, aggregates: a.map((d) => d._id) };
    },
    async loadRollups(ids: { hours: string[]; releases: string[]; users: string[] }) {
      const [h, r, u] = await Promise.all([byIds(hours, ids.hours), byIds(releases, ids.releases), byIds(users, ids.users)]);
      return { hours: h, releases: r, users: u };
    },

    /** Applies a journal a killed merge left behind. Call under the project lock. */
    async recover(project: number): Promise<boolean> {
      const head = await heads.findOne({ _id: project });
      if (!head?.journal) return false;
      await apply(head.journal);
      await heads.updateOne({ _id: project }, { $set: { journal: null } });
      return true;
    },
    /**
     * Journal, apply, clear. `existing` holds the ids the merge read from the
     * store: those documents are replaced, all others inserted (an insert
     * needs no lookup, which matters on FerretDB). Call under the project lock.
     */
    async commit(project: number, writes: MergeWrites, existing: Set<string>, now: Date): Promise<void> {
      const journal: Journal = { insert: emptyWrites(), replace: emptyWrites() };
      for (const key of Object.keys(writes) as (keyof MergeWrites)[]) {
        for (const doc of writes[key]) (journal[existing.has(doc._id) ? 'replace' : 'insert'][key] as Document[]).push(doc);
      }
      await heads.replaceOne({ _id: project }, { journal, merged_at: now }, { upsert: true });
      await apply(journal);
      await heads.updateOne({ _id: project }, { $set: { journal: null } });
    },

    /** Deletes raw entries, sessions, aggregates and hourly user states past retention; rollups stay. */
    async deleteExpired(now: Date): Promise<Record<string, number>> {
      const cutoff = new Date(now.getTime() - RETENTION_SECONDS * 1000);
      const [b, s, a, u] = await Promise.all([
        raw.deleteMany({ received_at: { $lt: cutoff } }),
        sessions.deleteMany({ started: { $lt: cutoff } }),
        aggregates.deleteMany({ started: { $lt: cutoff } }),
        users.deleteMany({ hour: { $ne: null, $lt: cutoff } }),
      ]);
      return { session_raw: b.deletedCount, sessions: s.deletedCount, session_aggregates: a.deletedCount, release_users: u.deletedCount };
    },
  };
}
export type SessionsStore = ReturnType<typeof makeSessionsStore>;

/** A fresh merge state from what `load` and `loadRollups` read. */
export function mergeState(
  loaded: { sessions: SessionDoc[]; aggregates: string[] },
  rollups: { hours: HourRollup[]; releases: ReleaseRollup[]; users: UserDoc[] },
): MergeState {
  return {
    sessions: new Map(loaded.sessions.map((d) => [d._id, d])),
    aggregates: new Set(loaded.aggregates),
    hours: new Map(rollups.hours.map((d) => [d._id, d])),
    releases: new Map(rollups.releases.map((d) => [d._id, d])),
    users: new Map(rollups.users.map((d) => [d._id, d])),
  };
}
