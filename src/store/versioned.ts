/**
 * What the flusher writes to MongoDB: documents that carry `v`, the
 * project's change counter when they were read from Redis, and per project
 * the counter of the last flush (a "flush mark"). Two flushers at once, or a
 * slow one, can then never put an older document over a newer one, and a
 * Redis that comes back behind the mark is known to have lost state.
 */
import { setTimeout } from 'node:timers/promises';
import type { AnyBulkWriteOperation, Collection, Db } from 'mongodb';
import { isDuplicateKey, onlyDuplicates } from './mongo.ts';

/** Documents per write of `writeNewer`; after each write it pauses as long as the write took. */
const WRITE_CHUNK = 10;

/**
 * Writes each document unless the stored one is as new or newer: an older
 * write finds no match, its upsert collides on `_id` and is dropped, and the
 * others of its write are written all the same.
 *
 * Paced: in writes of WRITE_CHUNK documents, each followed by a pause as long
 * as it took, so the flusher holds the store's one writer (FerretDB on
 * SQLite) at most about half the time and the API's inserts are not queued
 * behind a whole pass (docs/decisions.md). On MongoDB the pauses are short.
 */
export async function writeNewer<T extends { _id: string | number; v: number }>(collection: Collection<T>, docs: T[]): Promise<void> {
  for (let i = 0; i < docs.length; i += WRITE_CHUNK) {
    const started = performance.now();
    await replaceOlder(collection, docs.slice(i, i + WRITE_CHUNK));
    if (i + WRITE_CHUNK < docs.length) await setTimeout(performance.now() - started);
  }
}

async function replaceOlder<T extends { _id: string | number; v: number }>(collection: Collection<T>, docs: T[]): Promise<void> {
  const ops = docs.map((doc) => ({ replaceOne: { filter: { _id: doc._id, v: { $lt: doc.v } }, replacement: doc, upsert: true } }));
  try {
    await collection.bulkWrite(ops as unknown as AnyBulkWriteOperation<T>[], { ordered: false });
  } catch (err) {
    if (!onlyDuplicates(err)) throw err;
    // An older document collided. The embedded FerretDB stops an update at its first failing statement whatever
    // `ordered` says, and names the wrong one: the documents after it were not written. So each is written again on
    // its own; one already written is as new as itself, and writing it again changes nothing.
    if (docs.length > 1) for (const doc of docs) await replaceOlder(collection, [doc]);
  }
}

/** Per project, the change counter the last flush covered; written before the documents of that flush. */
export function makeFlushMarks(db: Db, name: string) {
  const marks = db.collection<{ _id: number; seq: number }>(name);
  return {
    /** 0: never flushed. */
    async get(project: number): Promise<number> {
      return (await marks.findOne({ _id: project }))?.seq ?? 0;
    },
    async raise(project: number, seq: number): Promise<void> {
      try {
        await marks.replaceOne({ _id: project, seq: { $lt: seq } }, { seq }, { upsert: true });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err; // a newer mark is there already
      }
    },
  };
}
