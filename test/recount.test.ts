/**
 * `lookout admin recount` streams (issue 25): it replays the raw batches one
 * at a time into a scratch state in Redis, so its memory does not grow with
 * the data, and a recount SIGKILLed halfway resumes when run again and ends
 * equal to a clean recount and to the pure oracle. Real Redis and FerretDB,
 * the real CLI.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SESSION_LAYOUT } from '../src/state/sessions.state.ts';
import { makeProject, rollupsAndRecount, sessionStatuses, startTestContext, type TestContext } from './helpers/context.ts';
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

/** 800 raw batches of one project, received a second apart, an hour ago. */
function storeHistory(project: number): Promise<string[]> {
  const start = Date.now() - 3600_000;
  return storeRawBatches(ctx, project, { count: 800, id: (b) => `raw-${project}-${String(b).padStart(4, '0')}`, at: (b) => new Date(start + b * 1000) });
}

it('resumes a recount SIGKILLed halfway and ends equal to a clean recount', async () => {
  const { project } = await makeProject(ctx);
  const id = Number(project.id);
  const sids = await storeHistory(id);
  const progressKey = `${ctx.runtime.sessionState.keys(id).base}rc:progress`;

  const killed = startProcess(['admin', 'recount', '--project', String(id)], ctx.env, /never/);
  await until(async () => JSON.parse((await ctx.runtime.sessionState.redis.get(progressKey)) ?? '{"batches":0}').batches >= 150, 60_000, 5);
  killed.child.kill('SIGKILL');
  await until(() => killed.child.exitCode !== null || killed.child.signalCode !== null);
  const stopped = JSON.parse((await ctx.runtime.sessionState.redis.get(progressKey))!) as { batches: number };
  expect(stopped.batches).toBeLessThan(800);

  // The killed process's lease on the project lapses (REBUILD_LEASE_MS) before another may rebuild it.
  const lease = ctx.runtime.sessionState.keys(id).rebuild;
  await until(async () => (await ctx.runtime.sessionState.redis.exists(lease)) === 0, 60_000);
  const resumed = await runCli(['admin', 'recount', '--project', String(id)], ctx.env);
  expect(resumed.stderr).toMatch(/recount: \d+ raw batches/);
  expect(resumed.code).toBe(0);
  expect(resumed.stderr).toContain(`recount: 800 raw batches`);
  expect(resumed.stderr).toContain(`(resumed after ${stopped.batches})`);
  const afterResume = await rollupsAndRecount(ctx, id);
  expect(afterResume.stored).toEqual(afterResume.recounted);
  const statuses = await sessionStatuses(ctx, id, sids);

  // A clean recount (nothing left to resume) gives the same rollups and states.
  expect(await ctx.runtime.sessionState.redis.exists(progressKey)).toBe(0);
  await ctx.runtime.keeper.rebuild(id, new Date());
  const clean = await rollupsAndRecount(ctx, id);
  expect(clean.stored).toEqual(afterResume.stored);
  expect(await sessionStatuses(ctx, id, sids)).toEqual(statuses);
}, 180_000);

it('a project whose session state follows the previous layout (values as text, placed by SHA-1) is rebuilt at its next verification and reads the same', async () => {
  const { project } = await makeProject(ctx);
  const id = Number(project.id);
  const sids = await storeHistory(id);
  await ctx.runtime.keeper.rebuild(id, new Date());
  const statuses = await sessionStatuses(ctx, id, sids);
  expect(statuses.size).toBeGreaterThan(1000);

  // What layout 2 left: its mark, and a bucket holding a session's value as text.
  const k = ctx.runtime.sessionState.keys(id);
  const redis = ctx.runtime.sessionState.redis;
  await redis.set(k.sessionLayout, '2');
  await redis.hset(`${k.base}ss:0`, `s${sids[0]}-old`, `3|0|${Date.now()}|1|`);
  expect(await ctx.runtime.keeper.verify(id, new Date())).toBe('rebuilt');

  expect(await redis.get(k.sessionLayout)).toBe(SESSION_LAYOUT);
  expect(await redis.hget(`${k.base}ss:0`, `s${sids[0]}-old`)).toBeNull();
  expect(await sessionStatuses(ctx, id, sids)).toEqual(statuses);
  const after = await rollupsAndRecount(ctx, id);
  expect(after.stored).toEqual(after.recounted);
}, 120_000);
