/**
 * Sequential numeric ids (organisations, projects, channels, a project's probes and maintenance windows).
 *
 * A counter is one document whose `seq` is raised by `$inc`. MongoDB raises it atomically; the embedded FerretDB
 * reads the document and writes it back in two steps, so callers at the same moment can all be handed one number
 * (measured: 100 callers, 50 at a time, got 13 distinct numbers). A number is therefore taken by inserting its
 * claim (`<counter>#<n>`, in the same collection) and only the one caller whose insert succeeds keeps it; the others
 * draw again, and the counter moves on with each draw.
 */
import type { Db } from 'mongodb';
import { isDuplicateKey, upserted } from './mongo.ts';

/** A counter (`seq`: the last number drawn), or a number's claim (no `seq`). */
interface CounterDoc {
  _id: string;
  seq?: number;
}

const claimOf = (counter: string, n: number) => `${counter}#${n}`;

/** The counter's next number; on FerretDB two callers at once may both be handed it. */
async function draw(db: Db, counter: string): Promise<number> {
  const doc = await upserted(() => db.collection<CounterDoc>('counters').findOneAndUpdate({ _id: counter }, { $inc: { seq: 1 } }, { upsert: true, returnDocument: 'after' }));
  if (doc?.seq === undefined) throw new Error(`counter ${counter} did not return a value`);
  return doc.seq;
}

/** A number of the counter that no other caller is handed, however many ask at once. */
export async function nextId(db: Db, counter: string): Promise<number> {
  for (;;) {
    const n = await draw(db, counter);
    try {
      await db.collection<CounterDoc>('counters').insertOne({ _id: claimOf(counter, n) });
      return n;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }
}

/** Inserts the document `make` gives for the counter's next number; a number two writers both drew is drawn again. */
export async function insertNumbered<T extends { _id: string }>(db: Db, counter: string, collection: string, make: (n: number) => T): Promise<T> {
  for (;;) {
    // the document's own insert is the number's claim
    const doc = make(await draw(db, counter));
    try {
      await db.collection<{ _id: string }>(collection).insertOne(doc);
      return doc;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }
}
