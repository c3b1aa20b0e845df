/**
 * The embedded FerretDB's patched paths (tools/ferretdb/patches.json) answer
 * as MongoDB does: reads and deletes by a list of ids, which the patches send
 * straight to SQLite's _id index, match and count exactly what a scan would.
 * Each case is a filter and the ids it must match among the same documents.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { Collection } from 'mongodb';
import { connectMongo, type Mongo } from '../src/store/mongo.ts';
import { testEnv } from './helpers/context.ts';

type Doc = { _id: string | number; n: number };

let mongo: Mongo;
let docs: Collection<Doc>;
beforeAll(async () => {
  const env = testEnv();
  mongo = await connectMongo(env.MONGODB_URL!, env.MONGODB_DB!);
  docs = mongo.db.collection<Doc>('by_ids');
});
afterAll(async () => {
  await mongo?.db.dropDatabase().catch(() => {});
  await mongo?.client.close();
});

const STORED: Doc[] = [
  ...['a', 'b', 'c', 'd'].map((id, n) => ({ _id: id, n })),
  { _id: 7, n: 4 },
  { _id: '7', n: 5 },
];
beforeEach(async () => {
  await docs.deleteMany({});
  await docs.insertMany(STORED.map((d) => ({ ...d })));
});

/** Ids as comparable keys: the number 7 and the string '7' are different ids. */
const keys = (ids: (string | number)[]) => ids.map((id) => `${typeof id} ${id}`).sort();

const CASES: { name: string; filter: object; matches: (string | number)[] }[] = [
  { name: 'strings, some missing', filter: { _id: { $in: ['a', 'c', 'zz'] } }, matches: ['a', 'c'] },
  { name: 'a string repeated', filter: { _id: { $in: ['b', 'b', 'b'] } }, matches: ['b'] },
  { name: 'none stored', filter: { _id: { $in: ['x', 'y'] } }, matches: [] },
  { name: 'a string that looks like a number', filter: { _id: { $in: ['7'] } }, matches: ['7'] },
  { name: 'a number and a string', filter: { _id: { $in: [7, 'd'] } }, matches: [7, 'd'] },
  { name: 'with another field', filter: { _id: { $in: ['a', 'b', 'c'] }, n: { $gte: 1 } }, matches: ['b', 'c'] },
  { name: 'with another operator', filter: { _id: { $in: ['a', 'b'], $ne: 'a' } }, matches: ['b'] },
];

for (const c of CASES) {
  it(`a read and a delete by ids (${c.name}) match what MongoDB matches`, async () => {
    expect(keys((await docs.find(c.filter).toArray()).map((d) => d._id))).toEqual(keys(c.matches));

    const { deletedCount } = await docs.deleteMany(c.filter);
    expect(deletedCount).toBe(c.matches.length);
    const left = STORED.map((d) => d._id).filter((id) => !c.matches.includes(id));
    expect(keys((await docs.find({}).toArray()).map((d) => d._id))).toEqual(keys(left));
  });
}

it('deleteOne by a list of ids deletes one of them', async () => {
  expect((await docs.deleteOne({ _id: { $in: ['a', 'b'] } })).deletedCount).toBe(1);
  expect(await docs.countDocuments({ _id: { $in: ['a', 'b'] } })).toBe(1);
});
