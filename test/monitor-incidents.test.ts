/**
 * A cron monitor's incidents as issues and notifications (issue 68), end to end through the real API, workers,
 * clock and a webhook receiver: failures open the monitor's issue and send `monitor.failed` once, the failures after
 * are counted in it, the recovery resolves it and sends `monitor.recovered` once, and a failure after that regresses
 * it. In real time: a monitor whose job does not check in raises its issue within two minutes of its margin ending,
 * and a run open past its max_runtime times out.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { monitorFingerprint } from '../src/domain/incidents.ts';
import { makeProject, type TestContext } from './helpers/context.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';
import { until } from './helpers/until.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
withWorkers(['events', 'notifications'], (c) => (ctx = c), { WEBHOOK_ALLOW_PRIVATE: 'true', FLUSH_INTERVAL_MS: '100' });
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

async function watched() {
  const p = await makeProject(ctx);
  const project = Number(p.project.id);
  const path = `/hook/${project}`;
  await ctx.runtime.notifications.add(project, { webhook: `${receiver.url}${path}` });
  const checkIn = async (slug: string, body: Record<string, unknown>) => {
    const res = await fetch(`${ctx.api}/api/${project}/cron/${slug}/${p.publicKey}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(202);
  };
  const issueOf = async (slug: string) => {
    const fingerprint = monitorFingerprint(slug, 'production');
    const id = (await ctx.runtime.issuesState.knownIssueIds(project, [fingerprint])).get(fingerprint);
    return id === undefined ? undefined : (await ctx.runtime.issuesState.issues(project, [id])).get(id);
  };
  return { project, checkIn, issueOf, got: (event: string) => receiver.of(event).filter((r) => r.path === path) };
}

it('failures open the issue and notify once, recovery resolves it and notifies once, a failure after regresses it', async () => {
  const p = await watched();
  await p.checkIn('billing-sync', { status: 'error', monitor_config: { schedule: { type: 'crontab', value: '0 * * * *' } } });
  await until(() => p.got('monitor.failed').length === 1);
  expect(p.got('monitor.failed')[0]!.body).toMatchObject({
    monitor: 'billing-sync',
    name: 'billing-sync',
    environment: 'production',
    reason: 'error',
    failures: 1,
    issue: { title: 'Monitor failure: billing-sync', kind: 'monitor', status: 'unresolved' },
  });
  await p.checkIn('billing-sync', { status: 'error' });
  await until(async () => (await p.issueOf('billing-sync'))?.event_count === 2);
  await p.checkIn('billing-sync', { status: 'ok' });
  await until(() => p.got('monitor.recovered').length === 1);
  expect(await p.issueOf('billing-sync')).toMatchObject({ status: 'resolved', event_count: 2 });
  await p.checkIn('billing-sync', { status: 'error' });
  await until(() => p.got('monitor.failed').length === 2);
  expect(await p.issueOf('billing-sync')).toMatchObject({ status: 'unresolved', event_count: 3, regression_count: 1 });
  // each incident's opening and end told once, and nothing else about it (no issue.created beside monitor.failed)
  expect(p.got('monitor.recovered')).toHaveLength(1);
  expect(p.got('issue.created')).toHaveLength(0);
  // every run is in the monitor's history, newest first
  const history = await ctx.runtime.stores.checkins.history(p.project, 'billing-sync', 'production', 10);
  expect(history.map((r) => r.status)).toEqual(['error', 'ok', 'error', 'error']);
});

it('in real time: a job that does not check in raises its issue within 2 minutes of its margin ending; a run past max_runtime times out', { timeout: 240_000 }, async () => {
  const p = await watched();
  await p.checkIn('every-minute', { status: 'ok', monitor_config: { schedule: { type: 'crontab', value: '* * * * *' }, checkin_margin: 1 } });
  await p.checkIn('long-run', { status: 'in_progress', check_in_id: crypto.randomUUID(), monitor_config: { schedule: { type: 'interval', value: 1, unit: 'day' }, max_runtime: 1 } });
  await until(async () => (await ctx.runtime.monitorsState.read({ project: p.project, slug: 'every-minute', environment: 'production' })).next_checkin_latest !== null);
  const marginEnds = (await ctx.runtime.monitorsState.read({ project: p.project, slug: 'every-minute', environment: 'production' })).next_checkin_latest!;
  await until(() => p.got('monitor.failed').length === 2, 200_000, 500);
  const missed = p.got('monitor.failed').find((r) => r.body.monitor === 'every-minute')!;
  expect(missed.body.reason).toBe('missed');
  expect(missed.at - marginEnds).toBeLessThan(2 * 60_000);
  expect(p.got('monitor.failed').find((r) => r.body.monitor === 'long-run')!.body.reason).toBe('timeout');
  expect(await p.issueOf('every-minute')).toMatchObject({ status: 'unresolved', culprit: 'no check-in by the expected time' });
});

it('a maintenance window holds what it covers, then reports the true state: an incident still open is raised, one that ended is not', { timeout: 90_000 }, async () => {
  const p = await watched();
  const started = Date.now();
  // a window long enough for a slow host to take the check-ins within it; its end is passed to the delivery below
  const ends = started + 40_000;
  await ctx.runtime.monitorsAdmin.addWindow(p.project, { from: new Date(started - 60_000).toISOString(), to: new Date(ends).toISOString() }, new Date());
  // one job fails in the window and stays failing; another fails and recovers within it
  await p.checkIn('still-failing', { status: 'error' });
  await p.checkIn('back-in-time', { status: 'error' });
  await p.checkIn('back-in-time', { status: 'ok' });
  const runs = async (slug: string) => (await ctx.runtime.stores.checkins.history(p.project, slug, 'production', 10)).length;
  await until(async () => (await runs('still-failing')) === 1 && (await runs('back-in-time')) === 2);
  await new Promise((r) => setTimeout(r, 500));
  expect(p.got('monitor.failed')).toHaveLength(0);
  expect(await p.issueOf('still-failing')).toBeUndefined();
  // the window ends; what it held is delivered (the clock does it within a minute: here at once, told it is later)
  await ctx.runtime.monitors.deliverLeftOver(new Date(ends + 60_000));
  await until(() => p.got('monitor.failed').length > 0);
  expect(p.got('monitor.failed').map((r) => r.body)).toMatchObject([{ monitor: 'still-failing', reason: 'error' }]);
  expect(await p.issueOf('still-failing')).toMatchObject({ status: 'unresolved', event_count: 1 });
  expect(await p.issueOf('back-in-time')).toBeUndefined();
  expect(p.got('monitor.recovered')).toHaveLength(0);
});
