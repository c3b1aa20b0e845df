/**
 * Repacking raw session batches (issue 25) on the real FerretDB and Redis: a
 * minute's batches become parts and their documents go, and the rollups, a
 * recount and the pure oracle read the same before and after. A run killed
 * after writing the parts leaves each batch in two places, read once; the
 * next run deletes the batches; a recount SIGKILLed inside a part resumes at
 * the batch it stopped at.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPACK_AFTER_MS, repackSessions } from '../src/services/repack.service.ts';
import { REPACK_BUCKET_MS, type Pace } from '../src/store/attempts.store.ts';
import { startWorkers } from '../workers/main.ts';
import { call, drained, makeProject, rollupsAndRecount, sessionStatuses, startTestContext, type TestContext } from './helpers/context.ts';
import { runCli, startProcess } from './helpers/process.ts';
import { storeRawBatches } from './helpers/raw-batches.ts';
import { until } from './helpers/until.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const deps = () => ({ stores: ctx.runtime.stores, state: ctx.runtime.state, log: ctx.runtime.log });
/** A time at which every minute listed so far is due. */
const later = () => new Date(Date.now() + REPACK_AFTER_MS + 2 * REPACK_BUCKET_MS);

it('rewrites the batches the worker applied as a part; rollups, a recount and the oracle read the same, and later sessions still count', async () => {
  const workers = await startWorkers(ctx.runtime, { queues: ['sessions'] });
  try {
    const { project, publicKey } = await makeProject(ctx);
    const id = Number(project.id);
    const sids = Array.from({ length: 200 }, () => crypto.randomBytes(16).toString('hex'));
    const post = (status: string, from: number) =>
      call(ctx, 'POST', '/api/v1/sessions', {
        key: publicKey,
        body: { sessions: sids.slice(from, from + 50).map((sid, i) => ({ sid, release: 'app@1', status, errors: status === 'ok' ? 0 : 1, did: `user-${i % 7}` })) },
      });
    for (let from = 0; from < sids.length; from += 50) expect((await post('ok', from)).status).toBe(202);
    for (let from = 0; from < 100; from += 50) expect((await post('crashed', from)).status).toBe(202);
    await drained(ctx);
    const batches = await ctx.runtime.stores.sessions.countOf(id);
    expect(await ctx.runtime.state.repackList.pending()).toBe(batches);
    const before = await rollupsAndRecount(ctx, id);
    expect(before.stored).toEqual(before.recounted);
    const statuses = await sessionStatuses(ctx, id, sids);

    expect(await repackSessions(deps(), later())).toEqual({ minutes: expect.any(Number), batches });
    expect(await ctx.runtime.stores.sessions.countOf(id)).toBeLessThan(batches);
    expect(await ctx.runtime.state.repackList.pending()).toBe(0);
    const after = await rollupsAndRecount(ctx, id);
    expect(after.recounted).toEqual(before.stored);
    await ctx.runtime.keeper.rebuild(id, new Date());
    expect((await rollupsAndRecount(ctx, id)).stored).toEqual(before.stored);
    expect(await sessionStatuses(ctx, id, sids)).toEqual(statuses);

    // Sessions updated after their batches were repacked count as before.
    expect((await post('errored', 100)).status).toBe(202);
    await drained(ctx);
    const updated = await rollupsAndRecount(ctx, id);
    expect(updated.stored).toEqual(updated.recounted);
    expect(Object.values(updated.stored.releases)[0]!.sessions).toEqual({ ok: 50, errored: 50, abnormal: 0, crashed: 100 });
  } finally {
    await workers.close();
  }
}, 120_000);

it('a run killed after writing the parts leaves every batch read once; the next run deletes them, and a recount killed in a part resumes', async () => {
  const { project } = await makeProject(ctx);
  const id = Number(project.id);
  // 400 batches in one minute ten minutes ago, with ids as the API makes them (src/util/group-commit.ts).
  const bucket = Math.floor(Date.now() / REPACK_BUCKET_MS) - 10;
  const at = (b: number) => new Date(bucket * REPACK_BUCKET_MS + b * 100);
  const ids = Array.from({ length: 400 }, (_, b) => `${at(b).getTime().toString(36)}${crypto.randomBytes(8).toString('hex')}`);
  const sids = await storeRawBatches(ctx, id, { count: 400, id: (b) => ids[b]!, at });
  await ctx.runtime.keeper.rebuild(id, new Date());
  const baseline = await rollupsAndRecount(ctx, id);
  expect(baseline.stored).toEqual(baseline.recounted);
  const statuses = await sessionStatuses(ctx, id, sids);
  for (const batch of ids) await ctx.runtime.state.repackList.add(batch);

  // Killed once part 0 is written, before any batch is deleted: small parts, so there are several.
  const raw = ctx.runtime.stores.sessions.raw;
  const killed: Pace = async (_units, step) => {
    if (await raw.findOne({ _id: `m:${bucket}:0` })) throw new Error('killed');
    return step();
  };
  await expect(ctx.runtime.stores.sessions.repack(bucket, ids, { paced: killed, partChars: 40_000 })).rejects.toThrow('killed');
  const parts = (await ctx.runtime.stores.sessions.countOf(id)) - 400;
  expect(parts).toBeGreaterThan(2);
  await ctx.runtime.keeper.rebuild(id, new Date());
  expect((await rollupsAndRecount(ctx, id)).stored).toEqual(baseline.stored);

  // The next run finds the minute written and deletes the batches it holds.
  expect(await ctx.runtime.stores.sessions.repack(bucket, ids, { partChars: 40_000 })).toBe(400);
  expect(await ctx.runtime.stores.sessions.countOf(id)).toBe(parts);
  expect(await ctx.runtime.stores.sessions.getBatch(ids[0]!)).toBeNull();
  await ctx.runtime.state.repackList.done(ids);

  // A recount SIGKILLed halfway through the parts resumes at the batch it stopped at.
  const progressKey = `${ctx.runtime.state.keys(id).base}rc:progress`;
  const stopped = startProcess(['admin', 'recount', '--project', String(id)], ctx.env, /never/);
  await until(async () => JSON.parse((await ctx.runtime.state.redis.get(progressKey)) ?? '{"batches":0}').batches >= 150, 60_000, 5);
  stopped.child.kill('SIGKILL');
  await until(() => stopped.child.exitCode !== null || stopped.child.signalCode !== null);
  const progress = JSON.parse((await ctx.runtime.state.redis.get(progressKey))!) as { batches: number; id: string };
  expect(progress.batches).toBeLessThan(400);
  expect(progress.id).toMatch(/^m:/); // it stopped in a part
  // The dead process's lease is deleted rather than waited out (test/recount.test.ts waits for it).
  await ctx.runtime.state.redis.del(ctx.runtime.state.keys(id).rebuild);
  const resumed = await runCli(['admin', 'recount', '--project', String(id)], ctx.env);
  expect(resumed.code).toBe(0);
  expect(resumed.stderr).toContain('recount: 400 raw batches');
  expect(resumed.stderr).toContain(`(resumed after ${progress.batches})`);
  expect((await rollupsAndRecount(ctx, id)).stored).toEqual(baseline.stored);
  expect(await sessionStatuses(ctx, id, sids)).toEqual(statuses);
}, 180_000);
