/**
 * Nothing acknowledged is lost: events the API stored while Redis was
 * unreachable are enqueued by the sweeper once Redis answers, and processed.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../config/index.ts';
import { makeLogger } from '../src/log.ts';
import { makeRuntime } from '../src/runtime.ts';
import { startApi } from '../src/http/server.ts';
import { startWorkers } from '../workers/main.ts';
import { call, drained, eventId, makeProject, startTestContext, type TestContext } from './helpers/context.ts';
import { until } from './helpers/until.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

it('events accepted while Redis is unreachable are swept into the queue and processed', async () => {
  const { secret } = await makeProject(ctx);
  // An API whose Redis URL points at a closed port: the enqueue fails, the insert does not.
  const deadRedis = loadConfig({ ...ctx.env, REDIS_URL: 'redis://127.0.0.1:1' });
  const runtime = await makeRuntime(deadRedis, { redisUrl: deadRedis.redisUrl!, mongoUrl: ctx.urls.mongoUrl }, makeLogger('silent', 'test'));
  const api = await startApi(runtime, { host: '127.0.0.1', port: 0 });
  // One after another: three groups, each with its backlog marker.
  for (let i = 0; i < 3; i++) {
    const body = { event_id: eventId(), timestamp: new Date().toISOString(), exception: { values: [{ type: 'SweptError', value: 'x' }] } };
    const res = await fetch(`${api.url}/api/v1/events`, {
      method: 'POST',
      headers: { 'x-service-key': secret, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(202);
  }
  await api.close();
  await runtime.close();

  // the markers written ahead and not taken were deleted when the API stopped
  expect(await ctx.runtime.stores.events.backlog.size()).toBe(3);
  // The sweeper's grace period has passed once "now" is a minute later: all three go in one job, whose groups the
  // worker reads in one query.
  expect(await ctx.runtime.events.sweep(new Date(Date.now() + 60_000))).toBe(3);
  expect(await ctx.runtime.queues.queue('events').count()).toBe(1);
  const workers = await startWorkers(ctx.runtime, { queues: ['events'] });
  try {
    await drained(ctx);
    const list = (await call(ctx, 'GET', '/api/v1/issues', { key: secret })).body;
    expect(list.issues[0]).toMatchObject({ exception_type: 'SweptError', event_count: 3 });
    // sweeping again finds nothing and changes nothing
    expect(await ctx.runtime.events.sweep(new Date(Date.now() + 60_000))).toBe(0);
  } finally {
    await workers.close();
  }
});

it('behind a backlog, sweeps only what was stored a grace before the oldest waiting job', async () => {
  const { secret } = await makeProject(ctx);
  const post = async (type: string) => {
    const body = { event_id: eventId(), timestamp: new Date().toISOString(), exception: { values: [{ type, value: 'x' }] } };
    expect((await call(ctx, 'POST', '/api/v1/events', { key: secret, body })).status).toBe(202);
  };
  // No worker runs: each post's job waits in the queue, behind the first one.
  await post('WaitingError');
  await new Promise((r) => setTimeout(r, 100));
  await post('WaitingError');
  // A group's job is added after its 202, on the side: wait until both groups wait in jobs.
  const queue = ctx.runtime.queues.queue('events');
  const queuedGroups = async () => (await queue.getWaiting()).reduce((n, job) => n + job.data.groups.length, 0);
  await until(async () => (await queuedGroups()) === 2);
  const oldest = (await ctx.runtime.queues.oldestWaiting('events.process'))!;
  expect(oldest.getTime()).toBeLessThanOrEqual(Date.now());
  const waiting = await queue.count();

  // A minute on, both markers are past the grace, but their jobs are still waiting: nothing is swept.
  expect(await ctx.runtime.events.sweep(new Date(Date.now() + 60_000))).toBe(0);
  // A marker stored long before the oldest waiting job has lost its job: it is swept.
  const lost = await ctx.runtime.stores.events.backlog.take();
  await ctx.runtime.stores.events.backlog.collection.updateOne({ _id: lost._id }, { $set: { received_at: new Date(oldest.getTime() - 120_000) } });
  expect(await ctx.runtime.events.sweep(new Date(Date.now() + 60_000))).toBe(1);
  expect(await queue.count()).toBe(waiting + 1);
});
