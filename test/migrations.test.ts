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
  expect(await runMigrations(db, log)).toEqual(MIGRATIONS.map((m) => m.name));
  expect((await db.collection('session_raw').listIndexes().toArray()).map((i) => i.name)).not.toContain('project_received');
  expect((await db.listCollections({ name: 'issues_migration' }).toArray()).length).toBe(0);
  // safe twice: two processes starting together may both run it
  await MIGRATIONS[0]!.up(db);
  expect(await runMigrations(db, log)).toEqual([]);
});

it('002 gives organisations and projects made before slugs one from their name, unique in its scope, and keeps those they have', async () => {
  const { db } = ctx.runtime.mongo;
  const orgs = db.collection<{ _id: number; name: string; slug?: string }>('orgs');
  const projects = db.collection<{ _id: number; org_id: number; name: string; slug?: string }>('projects');
  await orgs.insertMany([
    { _id: 9001, name: 'Café Müller' },
    { _id: 9002, name: 'Café Müller' },
    { _id: 9003, name: '2024' },
  ]);
  await projects.insertMany([
    { _id: 9101, org_id: 9001, name: 'Web Shop' },
    { _id: 9102, org_id: 9001, name: 'web-shop' },
    { _id: 9103, org_id: 9002, name: 'Web Shop' },
    { _id: 9104, org_id: 9002, name: 'kept', slug: 'mine' },
  ]);
  await MIGRATIONS.find((m) => m.name === '002-slugs')!.up(db);
  await MIGRATIONS.find((m) => m.name === '002-slugs')!.up(db); // twice: the same slugs
  const slugOf = async (c: typeof orgs | typeof projects, id: number) => (await c.findOne({ _id: id }))?.slug;
  expect([await slugOf(orgs, 9001), await slugOf(orgs, 9002), await slugOf(orgs, 9003)]).toEqual(['cafe-muller', 'cafe-muller-2', 'org-2024']);
  expect([await slugOf(projects, 9101), await slugOf(projects, 9102), await slugOf(projects, 9103), await slugOf(projects, 9104)]).toEqual(['web-shop', 'web-shop-2', 'web-shop', 'mine']);
  expect((await ctx.runtime.stores.projects.byIdOrSlug(9001, 'web-shop-2'))?._id).toBe(9102);
  expect(await ctx.runtime.stores.projects.byIdOrSlug(9002, 'web-shop-2')).toBeNull();
  expect((await ctx.runtime.stores.orgs.byIdOrSlug('cafe-muller-2'))?._id).toBe(9002);
});

it('refuses a store a newer Lookout upgraded (a migration it does not know), writing nothing', async () => {
  const { db } = ctx.runtime.mongo;
  const log = makeLogger('silent', 'test');
  await db.collection<{ _id: string; ran_at: Date }>('migrations').insertOne({ _id: '999-from-the-future', ran_at: new Date() });
  const before = await db.collection('migrations').countDocuments();
  await expect(runMigrations(db, log, [...MIGRATIONS, { name: '003-not-run', up: () => Promise.reject(new Error('must not run')) }])).rejects.toThrow(
    /upgraded by a newer Lookout \(its migration 999-from-the-future is unknown to this one, \d+\.\d+\.\d+\): run that release or a later one/,
  );
  expect(await db.collection('migrations').countDocuments()).toBe(before);
  await db.collection<{ _id: string }>('migrations').deleteOne({ _id: '999-from-the-future' });
});
