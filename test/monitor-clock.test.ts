/**
 * The monitors' clock (workers/monitor-clock.ts) on real Redis and the store: a monitor that does not check in is
 * missed once per minute judged, whichever of two clocks judges it, and minutes no clock saw are judged in order.
 */
import { expect, it } from 'vitest';
import { processCheckIns } from '../workers/digest/checkins.ts';
import { drained, makeProject, type TestContext } from './helpers/context.ts';
import { withWorkers } from './helpers/with-workers.ts';
import { makeMonitorClock } from '../workers/monitor-clock.ts';
import { monitorFingerprint } from '../src/domain/incidents.ts';
import type { MonitorEffect } from '../src/domain/monitor-state.ts';
import type { MonitorOutboxItem, MonitorRef } from '../src/state/monitors.state.ts';

let ctx: TestContext;
withWorkers(['sessions'], (c) => (ctx = c));

const M = 60_000;

it('two clocks judging the same minutes miss a silent monitor once a minute, from its first check-in on', async () => {
  const p = await makeProject(ctx);
  const project = Number(p.project.id);
  const res = await fetch(`${ctx.api}/api/${project}/cron/every-minute/${p.publicKey}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ status: 'ok', monitor_config: { schedule: { type: 'crontab', value: '* * * * *' }, checkin_margin: 1, failure_issue_threshold: 2 } }),
  });
  expect(res.status).toBe(202);
  // no worker serves the events queue here: the clocks below are the only ones, and the check-in is applied by hand
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
  const fingerprint = monitorFingerprint('every-minute', 'production');
  const issue = (await ctx.runtime.issuesState.knownIssueIds(project, [fingerprint])).get(fingerprint)!;
  expect((await ctx.runtime.issuesState.issues(project, [issue])).get(issue)).toMatchObject({ kind: 'monitor', title: 'Monitor failure: every-minute', status: 'unresolved', event_count: misses - 1 });
  const history = await ctx.runtime.stores.checkins.history(project, 'every-minute', 'production', 100);
  expect(history.filter((r) => r.status === 'missed')).toHaveLength(misses);
  // a clock turning again judges nothing twice
  expect(await b.turn(now + 4 * M)).toBe(0);
  expect((await ctx.runtime.monitorsState.read(monitor)).failures_in_row).toBe(misses);
});
