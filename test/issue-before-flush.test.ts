/**
 * The flusher lists an issue (snapshot-issues-3.lua) and then writes it to MongoDB; between the two, about a second
 * and longer while a write fails, the list shows an issue MongoDB does not have yet. Such an issue opens and takes
 * triage at once, read from its hash in Redis. Here the flusher's timer is stopped and its first step run by hand,
 * so the test holds that moment open, against the real API, events worker, Redis and FerretDB.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkers } from '../workers/main.ts';
import { boundProject, eventId, startTestContext, type TestContext } from './helpers/context.ts';
import { until } from './helpers/until.ts';

let ctx: TestContext;
let workers: Awaited<ReturnType<typeof startWorkers>>;
beforeAll(async () => {
  ctx = await startTestContext();
  workers = await startWorkers(ctx.runtime, { queues: ['events'] });
  await workers.flusher!.stop();
});
afterAll(async () => {
  await workers?.close();
  await ctx?.close();
});

describe('an issue listed before the flusher has written it', () => {
  it('opens, shows its events and activity, and can be assigned and commented on', async () => {
    const p = await boundProject(ctx);
    const sent = await p.send({
      event_id: eventId(),
      level: 'error',
      exception: { values: [{ type: 'EarlyError', value: 'seen at once', stacktrace: { frames: [{ module: 'app.early', function: 'run', lineno: 3, in_app: true }] } }] },
    });
    expect(sent.status).toBe(202);
    // the flusher's first step: the changed issue read and listed, not written
    await until(async () => {
      const snap = await ctx.runtime.issuesState.snapshot(p.id);
      if (!snap.verified) await ctx.runtime.keeper.verify(p.id, new Date());
      return snap.issues.length === 1;
    });
    const list = await p.get('/issues');
    expect(list.body.total).toBe(1);
    const id = Number(list.body.issues[0].id);
    expect(await ctx.runtime.stores.issues.getMany(p.id, [id])).toEqual([]);

    const page = await p.get(`/issues/${id}`);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.body).toMatchObject({ id: String(id), title: 'EarlyError: seen at once', event_count: 1, latest_event: { event_id: sent.body.id } });
    expect((await p.get(`/issues/${id}/events`)).body.events).toHaveLength(1);
    expect((await ctx.runtime.issues.activity(p.id, id)).activity.map((a) => a.kind)).toEqual(['first_seen']);

    await ctx.runtime.issues.assign(p.id, id, 'ana@shop.example', 'bo@shop.example', new Date());
    await ctx.runtime.issues.comment(p.id, id, 'looking', 'bo@shop.example', new Date());
    expect((await ctx.runtime.issues.activity(p.id, id)).activity.map((a) => a.kind)).toEqual(['comment', 'assigned', 'first_seen']);
    // the assignment wrote the issue as Redis holds it
    expect(await ctx.runtime.stores.issues.getMany(p.id, [id])).toMatchObject([{ _id: id, assignee: 'ana@shop.example' }]);

    // another project does not see it
    const other = await boundProject(ctx);
    expect((await other.get(`/issues/${id}`)).status).toBe(404);
  });
});
