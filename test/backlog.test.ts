/**
 * Backlog markers written ahead (src/store/backlog.ts), on the real store:
 * every marker handed out is stored before it is handed out and handed out
 * once; several are written per insert when groups come fast; those not
 * handed out are deleted, and a marker kept too long is never handed out.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectMongo, type Mongo } from '../src/store/mongo.ts';
import { makeBacklog, type WriteAhead } from '../src/store/backlog.ts';
import { testEnv } from './helpers/context.ts';
import { until } from './helpers/until.ts';

let mongo: Mongo;
beforeAll(async () => {
  const env = testEnv();
  mongo = await connectMongo(env.MONGODB_URL!, env.MONGODB_DB!);
});
afterAll(async () => {
  await mongo?.db.dropDatabase().catch(() => {});
  await mongo?.client.close();
});

/** Timings that make each step deterministic: nothing is released by the clock while a test runs. */
const held: WriteAhead = { aheadMs: 60_000, maxAhead: 10, maxAgeMs: 60_000, idleMs: 60_000 };

it('hands out each marker once, stored before it is handed out, several written per insert when groups come fast', async () => {
  const backlog = makeBacklog(mongo.db, 'backlog_fast', { ...held, aheadMs: 50, maxAhead: 64, idleMs: 100 });
  const taken: { _id: string; received_at: Date }[] = [];
  for (let wave = 0; wave < 5; wave++) {
    const markers = await Promise.all(Array.from({ length: 60 }, () => backlog.take()));
    const stored = await backlog.collection.find({ _id: { $in: markers.map((m) => m._id) } }).toArray();
    expect(stored).toHaveLength(markers.length);
    taken.push(...markers);
  }
  expect(new Set(taken.map((m) => m._id)).size).toBe(300);
  // written ahead: fewer inserts (one time stamp each) than groups
  expect(new Set(taken.map((m) => m.received_at.getTime())).size).toBeLessThan(300);
  // once groups stop, the markers not handed out are deleted
  await until(async () => (await backlog.size()) === 300);
  await backlog.finish(taken.map((m) => m._id));
  expect(await backlog.size()).toBe(0);
});

it('writes one marker for a first group, then as many as its rate asks, and release() deletes those not handed out', async () => {
  const backlog = makeBacklog(mongo.db, 'backlog_release', held);
  const first = await backlog.take();
  expect(await backlog.size()).toBe(1);
  const second = await backlog.take();
  expect(await backlog.size()).toBe(1 + held.maxAhead);
  await backlog.release();
  expect((await backlog.collection.find({}).toArray()).map((m) => m._id).sort()).toEqual([first._id, second._id].sort());
});

it('never hands out a marker kept longer than maxAgeMs: it deletes it and writes a new one', async () => {
  const backlog = makeBacklog(mongo.db, 'backlog_stale', { ...held, maxAgeMs: 0 });
  await backlog.take();
  await backlog.take(); // writes maxAhead, keeps maxAhead - 1
  const kept = (await backlog.collection.find({}).toArray()).map((m) => m._id);
  const third = await backlog.take();
  expect(kept).not.toContain(third._id);
  // the kept ones are gone: two handed out before, and the third's insert (one handed out, the rest kept again)
  const now = (await backlog.collection.find({}).toArray()).map((m) => m._id);
  expect(now.filter((id) => kept.includes(id))).toHaveLength(2);
  await backlog.release();
  expect(await backlog.size()).toBe(3);
});
