/**
 * Sessions and release rollups.
 *
 * - `session_batches`: the raw entries as received (one document per group of
 *   requests the API wrote at once), `processed` once a worker merged them.
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
import type { AnyBulkWriteOperation, Collection, Db, Document, Filter, IndexDescription } from 'mongodb';
import type { AggregateDoc, HourRollup, MergeState, MergeWrites, ReleaseRollup, SessionDoc, UserDoc } from '../domain/release-health.ts';
import type { AggregateUpdate, SessionUpdate } from '../domain/sessions.ts';
import { ensureIndexes } from './mongo.ts';

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
  processed: boolean;
  requests: RawRequest[];
}

interface HeadDoc {
  _id: number;
  journal: MergeWrites | null;
  merged_at: Date;
}

const TTL = (field: string, name: string): IndexDescription => ({ key: { [field]: 1 }, name, expireAfterSeconds: RETENTION_SECONDS });

export function makeSessionsStore(db: Db, opts: { ttlIndexes: boolean }) {
  const batches = db.collection<SessionBatchDoc>('session_batches');
  const sessions = db.collection<SessionDoc>('sessions');
  const aggregates = db.collection<AggregateDoc>('session_aggregates');
  const users = db.collection<UserDoc>('release_users');
  const hours = db.collection<HourRollup>('release_hours');
  const releases = db.collection<ReleaseRollup>('releases');
  const heads = db.collection<HeadDoc>('session_heads');

  /** Writes each document's full state; replaying the same writes is harmless. */
  async function replace<T extends Document & { _id: unknown }>(collection: Collection<T>, docs: T[]): Promise<void> {
    if (docs.length === 0) return;
    const ops = docs.map((doc) => ({ replaceOne: { filter: { _id: doc._id }, replacement: doc, upsert: true } }) as AnyBulkWriteOperation<T>);
    await collection.bulkWrite(ops, { ordered: false });
  }
  async function apply(writes: MergeWrites): Promise<void> {
    await Promise.all([
      replace(sessions, writes.sessions),
      replace(aggregates, writes.aggregates),
      replace(users, writes.users),
      replace(hours, writes.hours),
      replace(releases, writes.releases),
    ]);
  }
  const byIds = <T extends Document & { _id: string }>(collection: Collection<T>, ids: string[]): Promise<T[]> =>
    ids.length ? (collection.find({ _id: { $in: ids } } as Filter<T>).toArray() as Promise<T[]>) : Promise.resolve([]);

  return {
    batches,
    sessions,
    aggregates,
    hours,
    releases,
    async ensureIndexes() {
      // TTL indexes expire on MongoDB; FerretDB v1 does not expire them, so the
      // retention job deletes the same documents on both.
      const ttl = (field: string, name: string) => (opts.ttlIndexes ? [TTL(field, name)] : []);
      await ensureIndexes(batches, [{ key: { processed: 1, received_at: 1 }, name: 'unprocessed' }, ...ttl('received_at', 'retention')]);
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
    getBatch(id: string): Promise<SessionBatchDoc | null> {
      return batches.findOne({ _id: id });
    },
    async markBatchProcessed(id: string): Promise<void> {
      await batches.updateOne({ _id: id }, { $set: { processed: true } });
    },
    unprocessedBatches(olderThan: Date, limit: number): Promise<Pick<SessionBatchDoc, '_id'>[]> {
      return batches.find({ processed: false, received_at: { $lt: olderThan } }, { projection: { _id: 1 } }).limit(limit).toArray();
    },
    oldestUnprocessed(): Promise<Pick<SessionBatchDoc, 'received_at'> | null> {
      return batches.find({ processed: false }, { projection: { received_at: 1 } }).sort({ received_at: 1 }).limit(1).next();
    },

    /** The stored state a merge reads, by id. */
    async load(sessionIds: string[], aggregateIds: string[]) {
      const [s, a] = await Promise.all([byIds(sessions, sessionIds), aggregates.find({ _id: { $in: aggregateIds } }, { projection: { _id: 1 } }).toArray()]);
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
    /** Journal, apply, clear. Call under the project lock. */
    async commit(project: number, writes: MergeWrites, now: Date): Promise<void> {
      await heads.replaceOne({ _id: project }, { journal: writes, merged_at: now }, { upsert: true });
      await apply(writes);
      await heads.updateOne({ _id: project }, { $set: { journal: null } });
    },

    /** Deletes raw entries, sessions, aggregates and hourly user states past retention; rollups stay. */
    async deleteExpired(now: Date): Promise<Record<string, number>> {
      const cutoff = new Date(now.getTime() - RETENTION_SECONDS * 1000);
      const [b, s, a, u] = await Promise.all([
        batches.deleteMany({ received_at: { $lt: cutoff } }),
        sessions.deleteMany({ started: { $lt: cutoff } }),
        aggregates.deleteMany({ started: { $lt: cutoff } }),
        users.deleteMany({ hour: { $ne: null, $lt: cutoff } }),
      ]);
      return { session_batches: b.deletedCount, sessions: s.deletedCount, session_aggregates: a.deletedCount, release_users: u.deletedCount };
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
