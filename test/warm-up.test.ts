/**
 * The rehearsal an API process runs before it listens (src/services/warm-up.ts): the events, sessions, transactions
 * and log lines it rehearses are valid as SDKs send them (an item that is not stops the rehearsal with its error),
 * nothing is written or counted, and a rehearsal that fails stops nothing.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rehearseIngest } from '../src/services/warm-up.ts';
import { makeProject, startTestContext, type TestContext } from './helpers/context.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(() => ctx?.close());

it('rehearses native events, sign-in attempts, sessions and envelopes (events, sessions, transactions, logs), writing and counting nothing', async () => {
  const { project } = await makeProject(ctx);
  const rehearsal = rehearseIngest(ctx.runtime, 20);
  expect(rehearsal.error).toBeUndefined();
  expect(rehearsal.ms).toBeGreaterThan(0);
  await new Promise((resolve) => setTimeout(resolve, 200)); // a group commit would have written by now
  expect(await ctx.runtime.stores.events.collection.countDocuments({})).toBe(0);
  expect(await ctx.runtime.stores.events.backlog.size()).toBe(0);
  expect(await ctx.runtime.stores.traces.backlog.size()).toBe(0);
  expect(await ctx.runtime.stores.sessions.backlog.size()).toBe(0);
  const res = await fetch(`${ctx.api}/api/v1/ingestion`, { headers: { 'x-service-key': project.secret_key } });
  expect(res.status).toBe(200);
  const counts = (await res.json()) as { accepted: Record<string, number>; hourly: { accepted: number; dropped: number }[] };
  expect(counts.accepted).toEqual({});
  expect(counts.hourly.filter((h) => h.accepted + h.dropped > 0)).toEqual([]);
});

it('a rehearsal that fails says why and stops nothing', () => {
  const failing = {
    rehearse: () => {
      throw new Error('no such schema');
    },
  };
  expect(rehearseIngest({ events: failing, sessions: failing, sentry: failing }, 3)).toMatchObject({ error: 'no such schema' });
});
