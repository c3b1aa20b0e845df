/**
 * The monitors' clock (workers/monitor-clock.ts) on real Redis and the store: a monitor that does not check in is
 * missed once per minute judged, whichever of two clocks judges it, and minutes no clock saw are judged in order; a
 * worker that dies after moving a monitor and before delivering what it changed loses and doubles nothing.
 */
import { describe, expect, it } from 'vitest';
import { processCheckIns } from '../workers/digest/checkins.ts';
import { drained, makeProject, type TestContext } from './helpers/context.ts';
import { withWorkers } from './helpers/with-workers.ts';
import { makeMonitorClock } from '../workers/monitor-clock.ts';
import { monitorFingerprint } from '../src/domain/incidents.ts';
import type { MonitorEffect } from '../src/domain/monitor-state.ts';
import type { MonitorOutboxItem, MonitorRef } from '../src/state/monitors.state.ts';

let ctx: TestContext;

const M = 60_000;

/**
 * A project whose monitor `every-minute` checked in once (schedule every minute, margin 1), applied by hand: no
 * worker serves the events queue here, so the clocks a test makes are the only ones. Every minute from the one
 * before now to five after is recorded as heard.
 */
async function checkedInOnce(threshold: number) {
  const p = await makeProject(ctx);
  const project = Number(p.project.id);
  const res = await fetch(`${ctx.api}/api/${project}/cron/every-minute/${p.publicKey}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ status: 'ok', monitor_config: { schedule: { type: 'crontab', value: '* * * * *' }, checkin_margin: 1, failure_issue_threshold: threshold } }),
  });
  expect(res.status).toBe(202);
  const queue = ctx.runtime.queues.queue('events');
  let jobs = await queue.getJobs(['waiting', 'delayed']);
  for (let i = 0; i < 100 && !jobs.some((j) => j.name === 'checkins.process'); i++) {
    await new Promise((r) => setTimeout(r, 50));
    jobs = await queue.getJobs(['waiting', 'delayed']);
  }
  for (const job of jobs) if (job.name === 'checkins.process') await processCheckIns(job.data, ctx.runtime, new Date());
  await drained(ctx);
  const monitor = { project, slug: 'every-minute', environment: 'production' };
  const deadline = (await ctx.runtime.monitorsState.read(monitor)).next_checkin_latest!;
  const now = Date.now();
  const current = now - (now % M);
  for (let m = current - M; m <= current + 5 * M; m += M) await ctx.runtime.monitorsState.heard(m);
  const issue = async () => {
    const fingerprint = monitorFingerprint('every-minute', 'production');
    const id = (await ctx.runtime.issuesState.knownIssueIds(project, [fingerprint])).get(fingerprint)!;
    return (await ctx.runtime.issuesState.issues(project, [id])).get(id);
  };
  const missed = async () => (await ctx.runtime.stores.checkins.history(project, 'every-minute', 'production', 100)).filter((r) => r.status === 'missed');
  return { project, monitor, deadline, now, current, issue, missed };
}

// each block on a stack of its own: the clock is one per stack, and moves only forward
describe('two clocks', () => {
  withWorkers(['sessions'], (c) => (ctx = c));
  it('two clocks judging the same minutes miss a silent monitor once a minute, from its first check-in on', async () => {
    const { monitor, deadline, now, current, issue, missed } = await checkedInOnce(2);
    const effects: MonitorEffect[] = [];
    const monitors = {
      ...ctx.runtime.monitors,
      deliver: async (ref: MonitorRef, outbox: MonitorOutboxItem[], now: Date) => {
        effects.push(...outbox.flatMap((i) => i.effects));
        await ctx.runtime.monitors.deliver(ref, outbox, now);
      },
    };
    const clock = () => makeMonitorClock({ state: ctx.runtime.monitorsState, store: ctx.runtime.stores.checkins, log: ctx.runtime.log, monitors });
    const [a, b] = [clock(), clock()];
    await a.turn(now); // the first turn ever: nothing before this minute is judged
    // four minutes later, both at once: the next run was expected at current + 1, missed at current + 2 (its margin)
    const judged = await Promise.all([a.turn(now + 4 * M), b.turn(now + 4 * M)]);
    while ((await a.turn(now + 4 * M)) > 0);
    expect(judged[0]! + judged[1]!).toBeGreaterThan(0);
    // a miss at each minute judged from the run's deadline on: the second opens the incident (threshold 2)
    const misses = (current + 4 * M - deadline) / M + 1;
    expect(await ctx.runtime.monitorsState.read(monitor)).toMatchObject({ status: 'error', failures_in_row: misses, incident: { failures: misses } });
    expect(effects).toEqual(Array.from({ length: misses - 1 }, (_, i) => ({ kind: 'failed', id: expect.any(String), reason: 'missed', at: deadline + (i + 1) * M, first: i === 0, failures: i + 2 })));
    // the incident is the monitor's issue, each failure in it an occurrence; every miss is in the history
    expect(await issue()).toMatchObject({ kind: 'monitor', title: 'Monitor failure: every-minute', status: 'unresolved', event_count: misses - 1 });
    expect(await missed()).toHaveLength(misses);
    // a clock turning again judges nothing twice
    expect(await b.turn(now + 4 * M)).toBe(0);
    expect((await ctx.runtime.monitorsState.read(monitor)).failures_in_row).toBe(misses);
  });
});

describe('a worker that dies', () => {
  withWorkers(['sessions'], (c) => (ctx = c));
  it('a worker that dies judging a minute: the next worker judges on, and delivers what the dead one moved, once', async () => {
    const { monitor, deadline, now, current, issue, missed } = await checkedInOnce(1);
    const real = ctx.runtime.monitors;
    // it saves each move, then dies before delivering what the move changed
    const dying = makeMonitorClock({
      state: ctx.runtime.monitorsState,
      store: ctx.runtime.stores.checkins,
      log: ctx.runtime.log,
      monitors: { ...real, deliver: () => Promise.reject(new Error('killed')) },
    });
    await dying.turn(now);
    await expect(dying.turn(now + 4 * M)).rejects.toThrow('killed');
    expect(await missed()).toHaveLength(0);
    const next = makeMonitorClock({ state: ctx.runtime.monitorsState, store: ctx.runtime.stores.checkins, log: ctx.runtime.log, monitors: real });
    while ((await next.turn(now + 4 * M)) > 0);
    const misses = (current + 4 * M - deadline) / M + 1;
    expect((await ctx.runtime.monitorsState.read(monitor)).failures_in_row).toBe(misses);
    expect(await missed()).toHaveLength(misses);
    expect(await issue()).toMatchObject({ status: 'unresolved', event_count: misses });
    // delivering again (a second worker finding the same outbox) counts nothing twice
    await real.deliverLeftOver(new Date(now + 4 * M));
    expect(await issue()).toMatchObject({ event_count: misses });
    expect(await ctx.runtime.monitorsState.unsettled(monitor.project, now + 10 * M, 10)).toEqual([]);
  });
});
