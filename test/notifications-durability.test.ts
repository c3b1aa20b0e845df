/**
 * Notifications when processes die, and under a storm: worker processes
 * SIGKILLed after the state change that raised a trigger and in the middle
 * of its send still notify (at least once, always under the same delivery
 * id); 120 new issues within seconds reach a channel as at most about a
 * dozen requests, every one of them named or counted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundProject, eventId, startTestContext, type TestContext } from './helpers/context.ts';
import { startProcess, stopChild } from './helpers/process.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';
import { until } from './helpers/until.ts';

let ctx: TestContext;
let receiver: Receiver;
const env = { WEBHOOK_ALLOW_PRIVATE: 'true', FLUSH_INTERVAL_MS: '100', JOB_LOCK_MS: '2000' };
beforeAll(async () => {
  ctx = await startTestContext(env);
  receiver = await startReceiver();
});
afterAll(async () => {
  await ctx?.close();
  await receiver?.close();
});

async function bound() {
  const p = await boundProject(ctx);
  const project = p.id;
  const send = (title: string) => p.send({ event_id: eventId(), level: 'error', exception: { values: [{ type: title, value: 'x' }] } });
  const path = `/hook/${project}`;
  await ctx.runtime.notifications.add(project, { webhook: `${receiver.url}${path}` });
  return { project, send, got: (event: string) => receiver.of(event).filter((r) => r.path === path) };
}

const worker = (queues: string) => startProcess(['worker', '--queues', queues], { ...ctx.env, LOG_LEVEL: 'info' }, /workers started/);

describe('a worker killed between the state change and the send', () => {
  it('killed after applying the event, before dispatching: the next worker sends it', async () => {
    const p = await bound();
    const applier = worker('events');
    await applier.matched;
    await p.send('AppliedThenKilled');
    // The trigger is in the outbox: recorded by the script that created the issue.
    await until(async () => (await ctx.runtime.issuesState.redis.xlen(`${ctx.config.queuePrefix}:{p:${p.project}}:nq`)) > 0);
    applier.child.kill('SIGKILL');
    await stopChild(applier.child);
    expect(p.got('issue.created')).toHaveLength(0);
    const sender = worker('events,notifications');
    try {
      await sender.matched;
      await until(() => p.got('issue.created').length === 1);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(p.got('issue.created')).toHaveLength(1);
    } finally {
      await sender.stop();
    }
  });

  it('killed in the middle of the send: the stalled delivery is sent again under the same delivery id', async () => {
    const p = await bound();
    // The first request is held open: the worker sending it dies before it knows the answer.
    receiver.answer((n, r) => (r.path === `/hook/${p.project}` && p.got('issue.created').length === 1 ? 'hang' : 200));
    const first = worker('events,notifications');
    try {
      await first.matched;
      await p.send('KilledMidSend');
      await until(() => p.got('issue.created').length === 1);
      first.child.kill('SIGKILL');
      await stopChild(first.child);
    } finally {
      receiver.answer(() => 200);
    }
    const second = worker('events,notifications');
    try {
      await second.matched;
      await until(() => p.got('issue.created').length === 2, 30_000);
      await until(async () => (await ctx.runtime.notifications.deliveries(p.project)).deliveries[0]?.status === 'delivered');
    } finally {
      await second.stop();
    }
    const sent = p.got('issue.created');
    expect(new Set(sent.map((r) => r.delivery)).size).toBe(1);
    expect(sent.map((r) => r.body.issue.title)).toEqual(['KilledMidSend: x', 'KilledMidSend: x']);
  });
});

describe('noise control', () => {
  it('120 new issues within seconds: at most ~12 requests in the next minute, all 120 named or counted', { timeout: 150_000 }, async () => {
    const p = await bound();
    const w = worker('events,notifications');
    try {
      await w.matched;
      const started = Date.now();
      for (let i = 0; i < 120; i++) expect((await p.send(`StormError${i}`)).status).toBe(202);
      await until(() => p.got('digest').length === 1, 90_000, 200);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const within = receiver.received.filter((r) => r.path === `/hook/${p.project}` && r.at < started + 70_000);
      expect(within.length).toBeLessThanOrEqual(12);
      const singles = p.got('issue.created');
      const [digest] = p.got('digest');
      expect(singles).toHaveLength(10);
      expect(digest!.body.items).toHaveLength(50);
      expect(digest!.body.more).toBe(60);
      expect(singles.length + digest!.body.items.length + digest!.body.more).toBe(120);
      const named = new Set([...singles.map((r) => r.body.issue.title), ...digest!.body.items.map((i: { issue: { title: string } }) => i.issue.title)]);
      expect(named.size).toBe(60);
      // Every one of the 120 is in the deliveries log: ten sent alone, the rest in the digest.
      const log = (await ctx.runtime.notifications.deliveries(p.project)).deliveries;
      expect(log.filter((d) => d.event === 'issue.created' && d.status === 'in_digest')).toHaveLength(110);
      expect(log.find((d) => d.event === 'digest')).toMatchObject({ id: digest!.delivery, status: 'delivered' });
    } finally {
      await w.stop();
    }
  });
});
