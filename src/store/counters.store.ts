/** Sequential numeric ids (organisations, projects, issues). */
import type { Db } from 'mongodb';
import { isDuplicateKey } from './mongo.ts';

interface Counter {
  _id: string;
  seq: number;
}

export async function nextId(db: Db, name: string): Promise<number> {
  const doc = await db
    .collection<Counter>('counters')
    .findOneAndUpdate({ _id: name }, { $inc: { seq: 1 } }, { upsert: true, returnDocument: 'after' });
  if (!doc) throw new Error(`counter ${name} did not return a value`);
  return doc.seq;
}

/** Inserts the document `make` gives for the counter's next number; a number two writers both took is taken again. */
export async function insertNumbered<T extends { _id: string }>(db: Db, counter: string, collection: string, make: (n: number) => T): Promise<T> {
  for (;;) {
    const doc = make(await nextId(db, counter));
    try {
      await db.collection<{ _id: string }>(collection).insertOne(doc);
      return doc;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }
}
