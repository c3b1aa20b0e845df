/**
 * Writes made at the same moment on the embedded FerretDB, whose update and findAndModify read a document and then
 * write it in two steps: unpatched, 100 counter increments made 50 at a time handed out 13 distinct numbers,
 * organisations and projects created together failed on a duplicate id, and upserts of one missing document all
 * but one failed on the duplicate `_id`; a conditional update (an installation's activation) or a versioned write
 * (the flusher's) could pass for two writers at once. Patch 7 of tools/ferretdb/patches.json makes each such command whole to
 * the others, as MongoDB's are.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MONITOR_DEFAULTS } from '../src/domain/checkins.ts';
import { nextId } from '../src/store/counters.store.ts';
import { writeNewer } from '../src/store/versioned.ts';
import { call, makeProject, startTestContext, type TestContext } from './helpers/context.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const AT_ONCE = 8;
const atOnce = <T>(make: (i: number) => Promise<T>, n = AT_ONCE) => Promise.all(Array.from({ length: n }, (_, i) => make(i)));

it('hands each of many callers at once a number of its own', async () => {
  const drawn: number[] = [];
  for (let round = 0; round < 2; round++) drawn.push(...(await atOnce(() => nextId(ctx.runtime.mongo.db, 'concurrent'), 50)));
  expect(new Set(drawn).size).toBe(100);
  expect(Math.min(...drawn)).toBe(1);
});

it('creates organisations and projects made at once, each with its own id and slug', async () => {
  const admin = ctx.runtime.admin;
  const orgs = await atOnce((i) => admin.createOrg({ name: `Org ${i}`, plan: 'business', seats: null }));
  expect(new Set(orgs.map((o) => o.id)).size).toBe(AT_ONCE);
  const org = Number(orgs[0]!.id);
  const projects = await atOnce((i) => admin.createProject({ org, name: `shop ${i}`, securityMonitoring: true }));
  expect(new Set(projects.map((p) => p.id)).size).toBe(AT_ONCE);
  for (const p of projects) {
    const found = await ctx.runtime.stores.projects.byIdOrSlug(org, p.slug!);
    expect(found?._id).toBe(Number(p.id));
    expect(found?.name).toBe(`shop ${p.slug!.slice('shop-'.length)}`);
  }
});

it('makes one release, one monitor and one regression entry of upserts made at once', async () => {
  const { sourcemaps, checkins, activity } = ctx.runtime.stores;
  const now = new Date();
  const releases = await atOnce(() => sourcemaps.release(1, 'shop@1.0.0', undefined, now));
  expect(releases.map((r) => r._id)).toEqual(Array(AT_ONCE).fill('1:shop@1.0.0'));
  expect(await sourcemaps.releasesOf(1)).toHaveLength(1);

  const monitors = await atOnce((i) => checkins.setMonitor(1, 'nightly', { name: `nightly ${i}`, config: MONITOR_DEFAULTS }, now));
  expect(new Set(monitors.map((m) => m._id))).toEqual(new Set(['1:nightly']));

  await atOnce(() => activity.regressed(1, 7, 1, { at: now, kind: 'regressed', by: null, data: { release: 'shop@1.0.1' } }));
  const entries = await ctx.runtime.mongo.db.collection('activity').find({ _id: '1:7:r1' as never }).toArray();
  expect(entries).toHaveLength(1);
});

it('binds a key to one of the installations that activate it at once', async () => {
  const { secret } = await makeProject(ctx);
  const answers = await atOnce((i) => call(ctx, 'POST', '/api/v1/sdk/activate', { key: secret, body: { instance_id: `inst-race-${i}` } }));
  expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array(AT_ONCE - 1).fill(409)]);
});

it('keeps the newest of versioned writes made at once, whatever their order', async () => {
  const docs = ctx.runtime.mongo.db.collection<{ _id: string; v: number }>('versioned_race');
  const versions = [5, 12, 1, 9, 16, 3, 14, 7, 11, 2, 15, 8, 4, 13, 6, 10];
  await Promise.all(versions.map((v) => writeNewer(docs, [{ _id: 'doc', v }])));
  expect(await docs.findOne({ _id: 'doc' })).toEqual({ _id: 'doc', v: 16 });
});
