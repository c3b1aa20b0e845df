/**
 * Bound installations watched with no set-up (issue 68), in real time through the API, the workers and their clock:
 * an installation that stops polling raises "Installation silent" and notifies, and its issue resolves when it polls
 * again; the dashboard shows its last poll, its versions and the silence.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { boundProject, call, type TestContext } from './helpers/context.ts';
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

it('an installation that stops polling raises "Installation silent" and notifies; polling again resolves it', { timeout: 300_000 }, async () => {
  const p = await boundProject(ctx);
  await ctx.runtime.admin.setProject(p.id, { silent_after_minutes: 1 });
  const path = `/hook/${p.id}`;
  await ctx.runtime.notifications.add(p.id, { webhook: `${receiver.url}${path}` });
  const poll = () => call(ctx, 'GET', '/api/v1/sdk/config', { key: p.secret, instance: p.instance, headers: { 'user-agent': 'lookout-node/1.4.0' } });
  expect((await poll()).status).toBe(200);
  const view = async () => (await ctx.runtime.installations.view(p.id)).installation!;
  await until(async () => (await view()).last_poll !== null);
  expect(await view()).toMatchObject({ instance_id: p.instance, sdk: 'lookout-node/1.4.0', silent_since: null, silent_after_minutes: 1 });
  const lastPoll = Date.parse((await view()).last_poll!);

  // silent: nothing for a minute, then the clock's next minute reports it
  await until(() => receiver.of('installation.silent').some((r) => r.path === path), 180_000, 500);
  const notice = receiver.of('installation.silent').find((r) => r.path === path)!;
  expect(notice.body).toMatchObject({ instance: p.instance, minutes: 1, issue: { title: `Installation silent: ${p.instance}`, kind: 'installation', status: 'unresolved' } });
  expect(notice.at - lastPoll).toBeLessThan(3 * 60_000);
  expect((await view()).silent_since).not.toBeNull();
  const issue = Number(notice.body.issue.id);

  // heard again: the next minute resolves the issue
  expect((await poll()).status).toBe(200);
  await until(async () => (await ctx.runtime.issuesState.issues(p.id, [issue])).get(issue)?.status === 'resolved', 90_000, 500);
  expect((await view()).silent_since).toBeNull();
  expect(receiver.of('installation.silent').filter((r) => r.path === path)).toHaveLength(1);
});
