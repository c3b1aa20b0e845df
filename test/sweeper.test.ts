/**
 * Nothing acknowledged is lost: an event the API stored while Redis was
 * unreachable is enqueued by the sweeper once Redis answers, and processed.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../config/index.ts';
import { makeLogger } from '../src/log.ts';
import { makeRuntime } from '../src/runtime.ts';
import { startApi } from '../src/http/server.ts';
import { startWorkers } from '../workers/main.ts';
import { call, drained, eventId, makeProject, startTestContext, type TestContext } from './helpers/context.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

it('an event accepted while Redis is unreachable is swept into the queue and processed', async () => {
  const { secret } = await makeProject(ctx);
  // An API whose Redis URL points at a closed port: the enqueue fails, the insert does not.
  const deadRedis = loadConfig({ ...ctx.env, REDIS_URL: 'redis://127.0.0.1:1' });
  const runtime = await makeRuntime(deadRedis, { redisUrl: deadRedis.redisUrl!, mongoUrl: ctx.urls.mongoUrl }, makeLogger('silent', 'test'));
  const api = await startApi(runtime, { host: '127.0.0.1', port: 0 });
  const body = { event_id: eventId(), timestamp: new Date().toISOString(), exception: { values: [{ type: 'SweptError', value: 'x' }] } };
  const res = await fetch(`${api.url}/api/v1/events`, {
    method: 'POST',
    headers: { 'x-service-key': secret, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(202);
  await api.close();
  await runtime.close();

  expect(await ctx.runtime.stores.events.backlog.size()).toBe(1);
  const workers = await startWorkers(ctx.runtime, { queues: ['events'] });
  try {
    // The sweeper's grace period has passed once "now" is a minute later.
    expect(await ctx.runtime.events.sweep(new Date(Date.now() + 60_000))).toBe(1);
    await drained(ctx);
    const list = (await call(ctx, 'GET', '/api/v1/issues', { key: secret })).body;
    expect(list.issues[0]).toMatchObject({ exception_type: 'SweptError', event_count: 1 });
    // sweeping again finds nothing and changes nothing
    expect(await ctx.runtime.events.sweep(new Date(Date.now() + 60_000))).toBe(0);
  } finally {
    await workers.close();
  }
});
