/**
 * Session parts (issue 25) on the real FerretDB and Redis: the worker copies
 * the batches it applies into a part and lists them, the repacker deletes
 * their documents a minute later, and the rollups, a recount and the pure
 * oracle read the same before and after. A batch in its document and a part,
 * or in two parts, is read once; a part of one batch is not written; a recount
 * SIGKILLed inside a part resumes at the batch it stopped at.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPACK_AFTER_MS, deleteRepackedSessions } from '../src/services/repack.service.ts';
import { makePartWriter } from '../src/services/session-parts.ts';
import { REPACK_BUCKET_MS } from '../src/store/attempts.store.ts';
import type { SessionBatchDoc } from '../src/store/sessions.store.ts';
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

const deps = () => ({ stores: ctx.runtime.stores, state: ctx.runtime.sessionState, log: ctx.runtime.log });
/** A time at which every minute listed so far is due. */
const later = () => new Date(Date.now() + REPACK_AFTER_MS + 2 * REPACK_BUCKET_MS);

/** 400 batches of one project in one minute ten minutes ago, with ids as the API makes them (src/util/group-commit.ts). */
async function history(project: number) {
  const bucket = Math.floor(Date.now() / REPACK_BUCKET_MS) - 10;
  const at = (b: number) => new Date(bucket * REPACK_BUCKET_MS + b * 100);
  const ids = Array.from({ length: 400 }, (_, b) => `${at(b).getTime().toString(36)}${crypto.randomBytes(8).toString('hex')}`);
  const sids = await storeRawBatches(ctx, project, { count: 400, id: (b) => ids[b]!, at });
  const batches: SessionBatchDoc[] = [];
  for (const id of ids) batches.push((await ctx.runtime.stores.sessions.getBatch(id))!);
  return { ids, sids, batches };
}

it('the worker copies the batches it applies into a part; once their documents are deleted, rollups, a recount and the oracle read the same, and later sessions still count', async () => {
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
    // Far from a full part, the worker holds them until it is due (or, here, until it is drained).
    expect(await ctx.runtime.sessionState.partedList.pending()).toBe(0);
    await ctx.runtime.sessionParts.drain();
    expect(await ctx.runtime.sessionState.partedList.pending()).toBe(batches);
    expect(await ctx.runtime.stores.sessions.countOf(id)).toBe(batches + 1);
    const before = await rollupsAndRecount(ctx, id);
    expect(before.stored).toEqual(before.recounted);
    const statuses = await sessionStatuses(ctx, id, sids);

    expect(await deleteRepackedSessions(deps(), later())).toEqual({ minutes: expect.any(Number), batches });
    expect(await ctx.runtime.stores.sessions.countOf(id)).toBe(1);
    expect(await ctx.runtime.sessionState.partedList.pending()).toBe(0);
    const after = await rollupsAndRecount(ctx, id);
    expect(after.recounted).toEqual(before.stored);
    await ctx.runtime.keeper.rebuild(id, new Date());
    expect((await rollupsAndRecount(ctx, id)).stored).toEqual(before.stored);
    expect(await sessionStatuses(ctx, id, sids)).toEqual(statuses);

    // Sessions updated after their batches went into a part count as before.
    expect((await post('errored', 100)).status).toBe(202);
    await drained(ctx);
    const updated = await rollupsAndRecount(ctx, id);
    expect(updated.stored).toEqual(updated.recounted);
    expect(Object.values(updated.stored.releases)[0]!.sessions).toEqual({ ok: 50, errored: 50, abnormal: 0, crashed: 100 });
  } finally {
    await workers.close();
  }
}, 120_000);

it('writes a part once it is full; holds a batch added twice once; writes no part of one batch', async () => {
  const { project } = await makeProject(ctx);
  const id = Number(project.id);
  const { batches } = await history(id);
  const list = ctx.runtime.sessionState.partedList;
  const listed = await list.pending();
  const chars = (b: SessionBatchDoc) => b.requests.reduce((n, r) => n + r.entries.length, 0);
  const parts = makePartWriter({ store: ctx.runtime.stores.sessions, list, log: ctx.runtime.log, partChars: chars(batches[0]!) * 2.5 });
  for (const batch of [batches[0]!, batches[1]!, batches[1]!]) await parts.add(batch);
  expect(await list.pending()).toBe(listed);
  await parts.add(batches[2]!);
  expect(await list.pending()).toBe(listed + 3);
  expect(await ctx.runtime.stores.sessions.countOf(id)).toBe(401);
  await parts.add(batches[3]!);
  await parts.drain();
  expect(await list.pending()).toBe(listed + 3);
  expect(await ctx.runtime.stores.sessions.countOf(id)).toBe(401);
  await list.done(batches.slice(0, 3).map((b) => b._id));
});

it('a batch in its document and in a part, or in two parts, is read once; deleting the documents reads the same; a recount killed in a part resumes', async () => {
  const { project } = await makeProject(ctx);
  const id = Number(project.id);
  const { ids, sids, batches } = await history(id);
  await ctx.runtime.keeper.rebuild(id, new Date());
  const baseline = await rollupsAndRecount(ctx, id);
  expect(baseline.stored).toEqual(baseline.recounted);
  const statuses = await sessionStatuses(ctx, id, sids);

  // Eight parts of 50, and a ninth holding batches of two of them (a job delivered twice); the same part twice is one.
  const { sessions } = ctx.runtime.stores;
  for (let i = 0; i < 400; i += 50) await sessions.insertPart(batches.slice(i, i + 50));
  const twice = await sessions.insertPart(batches.slice(40, 60));
  expect(await sessions.insertPart(batches.slice(40, 60).reverse())).toBe(twice);
  expect(await sessions.countOf(id)).toBe(409);
  await ctx.runtime.keeper.rebuild(id, new Date());
  expect((await rollupsAndRecount(ctx, id)).stored).toEqual(baseline.stored);

  expect(await sessions.deleteBatches(ids)).toBe(400);
  expect(await sessions.countOf(id)).toBe(9);
  expect(await sessions.getBatch(ids[0]!)).toBeNull();
  await ctx.runtime.keeper.rebuild(id, new Date());
  expect((await rollupsAndRecount(ctx, id)).stored).toEqual(baseline.stored);

  // A recount SIGKILLed halfway through the parts resumes at the batch it stopped at (the ninth part gone, it
  // counts each batch once).
  await sessions.raw.deleteOne({ _id: twice });
  const progressKey = `${ctx.runtime.sessionState.keys(id).base}rc:progress`;
  const stopped = startProcess(['admin', 'recount', '--project', String(id)], ctx.env, /never/);
  await until(async () => JSON.parse((await ctx.runtime.sessionState.redis.get(progressKey)) ?? '{"batches":0}').batches >= 150, 60_000, 5);
  stopped.child.kill('SIGKILL');
  await until(() => stopped.child.exitCode !== null || stopped.child.signalCode !== null);
  const progress = JSON.parse((await ctx.runtime.sessionState.redis.get(progressKey))!) as { batches: number; id: string };
  expect(progress.batches).toBeLessThan(400);
  expect(progress.id).toMatch(/^p:/); // it stopped in a part
  // The dead process's lease is deleted rather than waited out (test/recount.test.ts waits for it).
  await ctx.runtime.sessionState.redis.del(ctx.runtime.sessionState.keys(id).rebuild);
  const resumed = await runCli(['admin', 'recount', '--project', String(id)], ctx.env);
  expect(resumed.code).toBe(0);
  expect(resumed.stderr).toContain('recount: 400 raw batches');
  expect(resumed.stderr).toContain(`(resumed after ${progress.batches})`);
  expect((await rollupsAndRecount(ctx, id)).stored).toEqual(baseline.stored);
  expect(await sessionStatuses(ctx, id, sids)).toEqual(statuses);
}, 180_000);
