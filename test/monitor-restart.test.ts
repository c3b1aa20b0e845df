/**
 * The monitors' clock across a worker killed in the middle of a missed window (issue 68): the only worker process is
 * SIGKILLed after the run was expected and before its margin ended, and another starts only after the deadline
 * passed. The miss is recorded once, neither lost with the dead worker nor doubled by the one that caught up.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { monitorFingerprint } from '../src/domain/incidents.ts';
import { makeProject, startTestContext, type TestContext } from './helpers/context.ts';
import { startProcess, stopChild } from './helpers/process.ts';
import { until } from './helpers/until.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext({ FLUSH_INTERVAL_MS: '100' });
});
afterAll(async () => {
  await ctx?.close();
});

const worker = () => startProcess(['worker', '--queues', 'events'], { ...ctx.env, LOG_LEVEL: 'info' }, /workers started/);
const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

it('a worker SIGKILLed inside a missed window: the next one records the miss once', { timeout: 240_000 }, async () => {
  const p = await makeProject(ctx);
  const project = Number(p.project.id);
  const monitor = { project, slug: 'every-minute', environment: 'production' };
  const first = worker();
  await first.matched;
  const res = await fetch(`${ctx.api}/api/${project}/cron/every-minute/${p.publicKey}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ status: 'ok', monitor_config: { schedule: { type: 'crontab', value: '* * * * *' }, checkin_margin: 1 } }),
  });
  expect(res.status).toBe(202);
  await until(async () => (await ctx.runtime.monitorsState.read(monitor)).next_checkin !== null);
  const { next_checkin: expected, next_checkin_latest: deadline } = await ctx.runtime.monitorsState.read(monitor);

  // killed inside the window: after the run was expected, before its margin ended
  await sleepUntil(expected! + 5000);
  first.child.kill('SIGKILL');
  await stopChild(first.child);
  // no worker at the deadline: the minute that decides the miss passes with none
  await sleepUntil(deadline! + 3000);
  const second = worker();
  try {
    await second.matched;
    const missedOf = async () => (await ctx.runtime.stores.checkins.history(project, 'every-minute', 'production', 100)).filter((r) => r.expected === expected);
    await until(async () => (await missedOf()).length > 0, 60_000, 250);
    // the worker goes on judging minutes; the window's miss stays one
    await new Promise((r) => setTimeout(r, 5000));
    expect((await missedOf()).map((r) => r.status)).toEqual(['missed']);
    const fingerprint = monitorFingerprint('every-minute', 'production');
    const issue = (await ctx.runtime.issuesState.knownIssueIds(project, [fingerprint])).get(fingerprint)!;
    const ids = await ctx.runtime.issuesState.redis.zrange(`${ctx.runtime.issuesState.keys(project).base}ie:${issue}`, 0, -1);
    expect(ids).toContain((await missedOf())[0]!.id);
    expect(new Set(ids).size).toBe(ids.length);
  } finally {
    await second.stop();
  }
});
