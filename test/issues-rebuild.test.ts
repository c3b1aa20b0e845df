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
