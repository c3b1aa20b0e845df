/** Sequential numeric ids (organisations, projects, issues). */
import type { Db } from 'mongodb';

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
