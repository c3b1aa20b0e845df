/**
 * Versioned writes (src/store/versioned.ts) on the real store: a document is written unless the stored one is as
 * new or newer, and an older document in a write never keeps the newer ones beside it from being written (on the
 * embedded FerretDB it did: an update stops at its first failing statement, whatever `ordered` says).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeNewer } from '../src/store/versioned.ts';
import { startTestContext, type TestContext } from './helpers/context.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

interface Doc {
  _id: string;
  v: number;
  n: number;
}

it('writes every newer document of a write, whatever older ones it holds', async () => {
  const docs = ctx.runtime.mongo.db.collection<Doc>('versioned_test');
  await writeNewer(docs, [
    { _id: 'a', v: 5, n: 1 },
    { _id: 'b', v: 5, n: 1 },
    { _id: 'c', v: 5, n: 1 },
  ]);
  // a is older than what is stored, b as new, c newer, d new: only c and d are written
  await writeNewer(docs, [
    { _id: 'a', v: 3, n: 2 },
    { _id: 'b', v: 5, n: 2 },
    { _id: 'c', v: 6, n: 2 },
    { _id: 'd', v: 1, n: 2 },
  ]);
  const stored = await docs.find({}).sort({ _id: 1 }).toArray();
  expect(stored.map((d) => [d._id, d.v, d.n])).toEqual([
    ['a', 5, 1],
    ['b', 5, 1],
    ['c', 6, 2],
    ['d', 1, 2],
  ]);
});
