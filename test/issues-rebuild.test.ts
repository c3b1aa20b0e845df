/**
 * The issues rebuild (after Redis lost state, or `admin recount`) counts each
 * stored error event once: a group it counted is skipped by its job, and a
 * group whose backlog marker was written before the rebuild but whose events
 * were stored after it read them is counted by its job.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fingerprintOf } from '../src/domain/fingerprint.ts';
import { eventKey } from '../src/store/events.store.ts';
import { startWorkers } from '../workers/main.ts';
import { call, drained, eventId, makeProject, startTestContext, type TestContext } from './helpers/context.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const error = (type: string) => ({ event_id: eventId(), timestamp: new Date().toISOString(), exception: { values: [{ type, value: 'x' }] } });

async function issueCounts(secret: string): Promise<Record<string, number>> {
  const { issues } = (await call(ctx, 'GET', '/api/v1/issues', { key: secret })).body as { issues: { exception_type: string; event_count: number }[] };
  return Object.fromEntries(issues.map((i) => [i.exception_type, i.event_count]));
}

it('counts each stored error event once, whether the rebuild or the group\'s job saw it first', async () => {
  const { project, secret } = await makeProject(ctx);
  const id = Number(project.id);

  // Stored through the API, its job waiting (no worker runs yet): the rebuild counts it.
  expect((await call(ctx, 'POST', '/api/v1/events', { key: secret, body: error('CountedByRebuild') })).status).toBe(202);
  // A group whose marker is on the backlog before the rebuild, its events stored after the rebuild read them.
  const marker = await ctx.runtime.stores.events.backlog.take();

  await ctx.runtime.keeper.rebuild(id, new Date());

  const late = error('StoredAfterRebuild');
  await ctx.runtime.stores.events.collection.insertOne({
    _id: eventKey(id, late.event_id),
    project_id: id,
    event_id: late.event_id,
    batch: marker._id,
    kind: 'error',
    security_kind: null,
    actor: null,
    ip: null,
    group_key: null,
    fingerprint: fingerprintOf(late),
    release: null,
    at: new Date(late.timestamp),
    received_at: new Date(),
    payload: JSON.stringify(late),
  });
  await ctx.runtime.queues.enqueue('events.process', { groups: [{ id: marker._id }] }, `late-${marker._id}`);

  const workers = await startWorkers(ctx.runtime, { queues: ['events'] });
  try {
    await drained(ctx);
    expect(await issueCounts(secret)).toEqual({ CountedByRebuild: 1, StoredAfterRebuild: 1 });
  } finally {
    await workers.close();
  }
});

it('a rebuild, or a project whose Redis keys predate the list indexes, restores every read of its issues', async () => {
  const { project, secret } = await makeProject(ctx);
  const id = Number(project.id);
  const send = (type: string, extra: Record<string, unknown>) => call(ctx, 'POST', '/api/v1/events', { key: secret, body: { ...error(type), ...extra } });
  const workers = await startWorkers(ctx.runtime, { queues: ['events'] });
  try {
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    expect((await send('AlphaError', { release: 'r1', environment: 'production', tags: { company: 'acme' } })).status).toBe(202);
    expect((await send('AlphaError', { release: 'r2', environment: 'production', timestamp: hourAgo })).status).toBe(202);
    expect((await send('BetaError', { release: 'r2', environment: 'staging', level: 'warning' })).status).toBe(202);
    await drained(ctx);
    const get = async (path: string) => (await call(ctx, 'GET', `/api/v1${path}`, { key: secret })).body;
    const reads = async () => {
      const list = await get('/issues?order=event_count');
      const alpha = list.issues.find((i: { exception_type: string }) => i.exception_type === 'AlphaError');
      const { latest_event: _, ...issue } = await get(`/issues/${alpha.id}`);
      return {
        list,
        filtered: await Promise.all(['release=r2', 'environment=staging', 'level=warning', 'company=acme', 'query=beta'].map((q) => get(`/issues?${q}`))),
        issue,
        events: await get(`/issues/${alpha.id}/events`),
      };
    };
    const before = await reads();
    expect(before.list.total).toBe(2);
    expect(before.events.total).toBe(2);

    await ctx.runtime.keeper.rebuild(id, new Date());
    await drained(ctx);
    await expect.poll(async () => (await get('/issues')).total, { timeout: 10_000 }).toBe(2);
    expect(await reads()).toEqual(before);

    // An older layout: the keys of the list indexes, events, spread and hours are not there.
    const base = ctx.runtime.issuesState.keys(id).base;
    const redis = ctx.runtime.issuesState.redis;
    for (const pattern of ['x:*', 'r:*', 'ie:*', 'is:*', 'ih:*', 'fr:*', 'fe:*', 'fc:*', 'fl:*', 'fk:*', 'tx:*', 'layout']) {
      const keys = await redis.keys(`${base}${pattern}`);
      if (keys.length) await redis.del(...keys);
    }
    expect(await ctx.runtime.keeper.verify(id, new Date())).toBe('rebuilt');
    await expect.poll(async () => (await get('/issues')).total, { timeout: 10_000 }).toBe(2);
    expect(await reads()).toEqual(before);
  } finally {
    await workers.close();
  }
});
