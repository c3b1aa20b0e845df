/**
 * A security issue as an owner investigates it (issue 49): its sign-in attempts paged newest first, its hourly
 * counts, the actors and addresses involved, and one attempt read whole, through the real ingest path.
 */
import { expect, it } from 'vitest';
import { boundProject, eventId, type TestContext } from './helpers/context.ts';
import { until } from './helpers/until.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
withWorkers(['events'], (c) => (ctx = c), { FLUSH_INTERVAL_MS: '100' });

it("pages a brute force's attempts with who, from where and with what; counts them by hour, actor and address", async () => {
  const p = await boundProject(ctx);
  const sent: string[] = [];
  for (let i = 0; i < 7; i++) {
    const id = eventId();
    sent.push(id);
    // the last one says why it failed (spec 2.6), the others say nothing
    const security = { kind: 'login_failed', actor: 'admin', ip: '203.0.113.8', user_agent: `curl/8.${i}`, ...(i === 6 && { outcome: 'wrong password' }) };
    expect((await p.send({ event_id: id, timestamp: new Date(Date.now() - 60_000 + i * 1000).toISOString(), security })).status).toBe(202);
  }
  let issue = '';
  await until(async () => {
    const list = (await p.get('/issues?kind=security')).body;
    issue = list.issues?.[0]?.id ?? '';
    return issue !== '' && list.issues[0].event_count === 7;
  });
  const page = (await p.get(`/issues/${issue}/events?limit=5`)).body;
  expect(page.total).toBe(7);
  expect(page.events).toHaveLength(5);
  expect(page.events[0]).toEqual({
    event_id: sent[6],
    timestamp: expect.any(String),
    received_at: expect.any(String),
    kind: 'login_failed',
    outcome: 'wrong password',
    actor: 'admin',
    ip: '203.0.113.8',
    user_agent: 'curl/8.6',
  });
  expect(page.events[1].outcome).toBe('failed');
  expect((await p.get(`/issues/${issue}/events?limit=5&offset=5`)).body.events.map((e: { event_id: string }) => e.event_id)).toEqual([sent[1], sent[0]]);

  const detail = (await p.get(`/issues/${issue}`)).body;
  expect(detail.hourly.last_24h.reduce((a: number, b: number) => a + b, 0)).toBe(7);
  expect(detail.spread.actors).toEqual([{ value: 'admin', count: 7 }]);
  expect(detail.spread.addresses).toEqual([{ value: '203.0.113.8', count: 7 }]);
  const row = (await p.get('/issues?kind=security')).body.issues[0];
  expect(row.events_24h.reduce((a: number, b: number) => a + b, 0)).toBe(7);

  const one = (await p.get(`/issues/${issue}/events/${sent[3]}`)).body;
  expect(one).toMatchObject({
    issue_id: issue,
    newer: sent[4],
    older: sent[2],
    event: { event_id: sent[3], security: { actor: 'admin', user_agent: 'curl/8.3' } },
  });
});

it("keeps a security issue's decisions: made, extended by a later burst, lifted; a new one after, ended by a resolve", async () => {
  const p = await boundProject(ctx);
  let n = 0;
  const burst = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const security = { kind: 'login_failed', actor: 'root', ip: '192.0.2.44' };
      expect((await p.send({ event_id: eventId(), timestamp: new Date(Date.now() - 30_000 + n++ * 100).toISOString(), security })).status).toBe(202);
    }
  };
  const history = async () => (await ctx.runtime.decisions.ofIssue(p.id, Number(issue), new Date())).decisions;
  let issue = '';
  await burst(5);
  await until(async () => {
    issue = (await p.get('/issues?kind=security')).body.issues?.[0]?.id ?? '';
    return issue !== '' && (await history()).length === 1;
  });
  const [made] = await history();
  expect(made).toMatchObject({ state: 'active', ended_at: null, ip: '192.0.2.44', type: 'ban' });
  expect(made!.extended_at).toBeUndefined();

  await burst(5);
  // every attempt applied (each job that grows the burst extends the decision once)
  await until(async () => (await history())[0]?.extended_at !== undefined && (await ctx.runtime.stores.events.backlog.size()) === 0);
  const [extended] = await history();
  expect(extended).toMatchObject({ id: made!.id, state: 'active', created_at: made!.created_at, extensions: expect.any(Number) });
  expect(extended!.extensions).toBeGreaterThanOrEqual(1);
  expect(Date.parse(extended!.until)).toBeGreaterThan(Date.parse(made!.until));

  await ctx.runtime.decisions.lift(p.id, made!.id, new Date());
  const [lifted] = await history();
  expect(lifted).toMatchObject({ id: made!.id, state: 'lifted', extended_at: extended!.extended_at, ended_at: expect.any(String) });

  // attempts after the lift make a new decision; resolving the issue ends it
  await new Promise((resolve) => setTimeout(resolve, 5));
  await burst(5);
  await until(async () => (await history())[0]?.state === 'active' && (await ctx.runtime.stores.events.backlog.size()) === 0);
  await ctx.runtime.issues.setStatus(p.id, Number(issue), { status: 'resolved' }, null, new Date());
  const ended = await history();
  expect(ended.map((d) => d.state)).toEqual(['resolved', 'lifted']);
  expect(ended[0]!.id).not.toBe(made!.id);
});
