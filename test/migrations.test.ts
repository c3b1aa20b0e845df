/**
 * Numbered store migrations against the real FerretDB: each runs once, is recorded, and is safe to run again;
 * the first removes what the pre-release formats left behind.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeLogger } from '../src/log.ts';
import { MIGRATIONS, runMigrations } from '../src/store/migrations/index.ts';
import { startTestContext, type TestContext } from './helpers/context.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

it('runs each migration once, in order, and records it; 001 drops the pre-release index and collection', async () => {
  const { db } = ctx.runtime.mongo;
  const log = makeLogger('silent', 'test');
  // the runtime ran them at start
  expect((await db.collection('migrations').find({}).toArray()).map((m) => m._id)).toEqual(MIGRATIONS.map((m) => m.name));
  expect(await runMigrations(db, log)).toEqual([]);

  // a store made before the first release
  await db.collection('session_raw').createIndex({ 'requests.project_id': 1, received_at: 1 }, { name: 'project_received' });
  await db.collection('issues_migration').insertOne({ _id: 'x' } as never);
  await db.collection('migrations').deleteMany({});
  expect(await runMigrations(db, log)).toEqual(['001-drop-pre-release-leftovers']);
  expect((await db.collection('session_raw').listIndexes().toArray()).map((i) => i.name)).not.toContain('project_received');
  expect((await db.listCollections({ name: 'issues_migration' }).toArray()).length).toBe(0);
  // safe twice: two processes starting together may both run it
  await MIGRATIONS[0]!.up(db);
  expect(await runMigrations(db, log)).toEqual([]);
});
