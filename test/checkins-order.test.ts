/**
 * A monitor's check-ins applied after later ones (workers/digest/checkins.ts, src/domain/monitor-state.ts): the
 * worker runs the events queue's jobs side by side, and a retried job waits, so the job of a later group can run
 * before the job of an earlier one. No worker serves the events queue here: the test runs the jobs by hand, the later
 * one first.
 */
import { expect, it } from 'vitest';
import { monitorFingerprint } from '../src/domain/incidents.ts';
import { processCheckIns } from '../workers/digest/checkins.ts';
import { makeProject, type TestContext } from './helpers/context.ts';
import { until } from './helpers/until.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
withWorkers(['sessions'], (c) => (ctx = c));

async function checkInJobs() {
  const jobs = await ctx.runtime.queues.queue('events').getJobs(['waiting', 'delayed']);
  return jobs.filter((j) => j.name === 'checkins.process').sort((a, b) => a.timestamp - b.timestamp);
}

it("an error then an ok, the ok's job run first: the monitor ends as its sender left it, nothing raised, both runs recorded", async () => {
  const p = await makeProject(ctx);
  const project = Number(p.project.id);
  const checkIn = async (status: string) => {
    const res = await fetch(`${ctx.api}/api/${project}/cron/nightly/${p.publicKey}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status }) });
    expect(res.status).toBe(202);
  };
  // each check-in its own group and job: the second sent once the first's job is queued
  await checkIn('error');
  await until(async () => (await checkInJobs()).length === 1);
  await checkIn('ok');
  await until(async () => (await checkInJobs()).length === 2);
  const [first, second] = await checkInJobs();

  await processCheckIns(second!.data, ctx.runtime, new Date());
  await processCheckIns(first!.data, ctx.runtime, new Date());
  const monitor = { project, slug: 'nightly', environment: 'production' };
  expect(await ctx.runtime.monitorsState.read(monitor)).toMatchObject({ status: 'ok', incident: null });
  const fingerprint = monitorFingerprint('nightly', 'production');
  const issue = async () => (await ctx.runtime.issuesState.knownIssueIds(project, [fingerprint])).get(fingerprint);
  expect(await issue()).toBeUndefined();
  const history = await ctx.runtime.stores.checkins.history(project, 'nightly', 'production', 10);
  expect(history.map((r) => r.status)).toEqual(['ok', 'error']);
  expect(await ctx.runtime.stores.checkins.backlog.size()).toBe(0);
});
