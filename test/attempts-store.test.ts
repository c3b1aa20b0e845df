/**
 * Packed sign-in attempts (src/store/attempts.store.ts) on the real FerretDB:
 * an attempt is read back only from the group its key names, once, so an
 * API that died between the packed document and the keys (nothing
 * acknowledged), a duplicate within a group and a duplicate of an earlier
 * group are never counted; retention deletes a document with the keys it
 * owns and leaves another group's.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AttemptBody } from '../src/store/attempts.store.ts';
import { eventKey } from '../src/store/events.store.ts';
import { eventId, startTestContext, type TestContext } from './helpers/context.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const PROJECT = 990_001;
const attempt = (id: string, actor: string): AttemptBody => ({
  event_id: id,
  timestamp: new Date().toISOString(),
  security: { kind: 'login_failed', actor, ip: '203.0.113.7' },
  extra_field: { kept: true },
});

it('reads back only what a group owns, once; retention deletes a group with its own keys only', async () => {
  const events = ctx.runtime.stores.events;
  const [a, b, c] = [eventId(), eventId(), eventId()];
  const insert = (items: AttemptBody[]) => events.insertGroup(items.map((attempt) => ({ attempt, project: PROJECT })), new Date());

  const first = await insert([attempt(a, 'ann'), attempt(b, 'bob'), attempt(b, 'bob')]);
  expect([...first.duplicates]).toEqual([2]);
  const second = await insert([attempt(b, 'bob'), attempt(c, 'cy')]);
  expect([...second.duplicates]).toEqual([0]);
  // A group whose packed document was written and whose keys were not: the API died, nothing was acknowledged.
  await events.attempts.insert('orphan-group', new Date(), new Map([[PROJECT, [attempt(eventId(), 'zed')]]]));

  const owned = await events.attempts.ofBatches([first.id, second.id, 'orphan-group']);
  expect(owned.map((x) => [x.event_id, x.actor, x.batch]).sort()).toEqual(
    [
      [a, 'ann', first.id],
      [b, 'bob', first.id],
      [c, 'cy', second.id],
    ].sort(),
  );
  expect(owned.find((x) => x.event_id === a)!.body.extra_field).toEqual({ kept: true });
  const streamed = [];
  for await (const chunk of events.attempts.ofProject(PROJECT)) streamed.push(...chunk);
  expect(streamed.map((x) => x.event_id).sort()).toEqual([a, b, c].sort());
  expect((await events.body(eventKey(PROJECT, c)))?.security).toEqual({ kind: 'login_failed', actor: 'cy', ip: '203.0.113.7' });

  // The first group goes: its keys (a, b) with it, the second group's key (c) stays.
  expect(await events.attempts.delete(`${first.id}:${PROJECT}`)).toBe(2);
  expect(await events.attempts.delete(`${first.id}:${PROJECT}`)).toBe(0); // run again after a crash: nothing left
  expect(await events.collection.countDocuments({ _id: { $in: [a, b, c].map((id) => eventKey(PROJECT, id)) } })).toBe(1);
  expect((await events.attempts.ofBatches([first.id, second.id])).map((x) => x.event_id)).toEqual([c]);
});
