/**
 * The claims of docs/scaling.md that one machine can test: two API
 * processes (clients alternate between them, as a load balancer would) and
 * two worker processes on the same stores. The rate limit is one budget,
 * an event_id is stored once whichever API gets it, sessions merged by two
 * workers equal a recount, and one /metrics shows every process.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { worse, type SessionStatus } from '../src/domain/sessions.ts';
import { drained, eventId, makeProject, rollupsAndRecount, sessionStatuses, startTestContext, type TestContext } from './helpers/context.ts';
import { startFleet, type Fleet } from './helpers/process.ts';

let ctx: TestContext;
let fleet: Fleet;
beforeAll(async () => {
  ctx = await startTestContext();
  fleet = await startFleet({ ...ctx.env, LOG_LEVEL: 'info', SESSIONS_RATE_LIMIT_PER_MINUTE: '30' });
}, 120_000);
afterAll(async () => {
  await fleet?.stop();
  await ctx?.close();
});

it('shares one rate-limit budget between API processes', async () => {
  const { publicKey } = await makeProject(ctx);
  const answers = await Promise.all(Array.from({ length: 45 }, (_, i) => fleet.post(i, '/api/v1/sessions', publicKey, { sid: `budget-${i}-abcdef`, status: 'ok', release: 'r@1' })));
  expect(answers.filter((a) => a.status === 202)).toHaveLength(30);
  expect(answers.filter((a) => a.status === 429)).toHaveLength(15);
});

it('stores an event_id once, whichever API process gets it', async () => {
  const { secret } = await makeProject(ctx);
  const ids = Array.from({ length: 10 }, () => eventId());
  const sends = ids.flatMap((id) =>
    [0, 1, 0, 1].map((n) => fleet.post(n, '/api/v1/events', secret, { event_id: id, timestamp: new Date().toISOString(), exception: { values: [{ type: 'ScaleError', value: 'x' }] } })),
  );
  const answers = await Promise.all(sends);
  expect(answers.every((a) => a.status === 202)).toBe(true);
  expect(answers.filter((a) => a.body.duplicate === false)).toHaveLength(10);
  await drained(ctx, 60_000);
  expect(await ctx.runtime.stores.events.collection.countDocuments({ event_id: { $in: ids } })).toBe(10);
}, 90_000);

it('merges sessions sent through both APIs and both workers into rollups equal to a recount', async () => {
  const { project, publicKey } = await makeProject(ctx);
  const statuses: SessionStatus[] = ['ok', 'errored', 'abnormal', 'crashed'];
  const worst = new Map<string, SessionStatus>();
  const updates: Record<string, string>[] = [];
  const started = new Date(Date.now() - 2 * 3600_000).toISOString();
  for (let i = 0; i < 120; i++) {
    const sid = `scale-session-${i % 40}`;
    const status = statuses[(i * 7) % 4]!;
    worst.set(sid, worse(worst.get(sid) ?? 'ok', status));
    // one user and one start per session, as SDKs send them (docs/decisions.md: the first report fixes both)
    updates.push({ sid, status, release: 'shop@2.0.0', did: `user-${(i % 40) % 9}`, started });
  }
  // 12 requests of 10 updates, within the budget of 30 a minute
  const sends = Array.from({ length: 12 }, (_, n) => fleet.post(n, '/api/v1/sessions', publicKey, { sessions: updates.slice(n * 10, n * 10 + 10) }));
  expect((await Promise.all(sends)).map((a) => a.status)).toEqual(Array(12).fill(202));
  await drained(ctx, 90_000);
  expect(await sessionStatuses(ctx, Number(project.id), worst.keys())).toEqual(worst);
  const { stored: rollups, recounted } = await rollupsAndRecount(ctx, Number(project.id));
  expect(rollups).toEqual(recounted);
}, 120_000);

it('shows every API and worker process in one /metrics scrape', async () => {
  const deadline = Date.now() + 20_000;
  let processes = new Set<string>();
  while (Date.now() < deadline) {
    const text = await (await fetch(`${fleet.apis[0]}/metrics`)).text();
    processes = new Set([...text.matchAll(/process="((?:api|worker)-[^"]+)"/g)].map((m) => m[1]!.split('-')[0]! + '-' + m[1]!.split('-').at(-1)));
    const pids = fleet.procs.map((p) => p.child.pid);
    if (pids.every((pid) => [...processes].some((p) => p.endsWith(`-${pid}`)))) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  for (const proc of fleet.procs) expect([...processes].some((p) => p.endsWith(`-${proc.child.pid}`)), `process ${proc.child.pid} in /metrics`).toBe(true);
}, 30_000);
