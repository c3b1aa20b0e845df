/**
 * Two worker processes (as `npx lookout worker` runs them) share one burst:
 * the result is one issue with exact counts, the same as one worker gives.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, drained, eventId, makeProject, startTestContext, type TestContext } from './helpers/context.ts';
import { startProcess } from './helpers/process.ts';

let ctx: TestContext;
const procs: ReturnType<typeof startProcess>[] = [];
beforeAll(async () => {
  ctx = await startTestContext();
  for (let i = 0; i < 2; i++) {
    const proc = startProcess(['worker', '--queues', 'events', '--concurrency', '8'], { ...ctx.env, LOG_LEVEL: 'info' }, /workers started/);
    procs.push(proc);
    await proc.matched;
  }
});
afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await ctx?.close();
});

it('two worker processes on one burst give one issue with exact counts', async () => {
  const { secret } = await makeProject(ctx);
  const base = Date.parse('2026-11-20T10:00:00Z');
  const sends = [];
  for (let i = 0; i < 30; i++) {
    sends.push(
      call(ctx, 'POST', '/api/v1/events', {
        key: secret,
        body: { event_id: eventId(), timestamp: new Date(base + i * 5000).toISOString(), security: { kind: 'login_failed', actor: 'bob', ip: '192.0.2.1' } },
      }),
    );
  }
  expect((await Promise.all(sends)).every((r) => r.status === 202)).toBe(true);
  // and an error issue hit by the same two workers at once
  const errors = [];
  for (let i = 0; i < 20; i++) {
    errors.push(
      call(ctx, 'POST', '/api/v1/events', {
        key: secret,
        body: { event_id: eventId(), timestamp: new Date(base + i * 1000).toISOString(), exception: { values: [{ type: 'ParallelError', value: `n${i}` }] }, fingerprint: ['parallel'], tags: { company: `c${i % 3}` } },
      }),
    );
  }
  expect((await Promise.all(errors)).every((r) => r.status === 202)).toBe(true);
  await drained(ctx, 60_000);

  const list = (await call(ctx, 'GET', '/api/v1/issues?order=id', { key: secret })).body;
  expect(list.total).toBe(2);
  const security = list.issues.find((i: { kind: string }) => i.kind === 'security');
  const error = list.issues.find((i: { kind: string }) => i.kind === 'error');
  expect(security).toMatchObject({ exception_type: 'brute_force', event_count: 30 });
  expect(security.first_seen).toBe(new Date(base).toISOString());
  expect(security.last_seen).toBe(new Date(base + 29 * 5000).toISOString());
  expect(error).toMatchObject({ exception_type: 'ParallelError', event_count: 20 });
  expect(error.companies.sort()).toEqual(['c0', 'c1', 'c2']);
}, 90_000);
