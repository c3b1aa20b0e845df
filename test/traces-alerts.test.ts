/**
 * performance.regressed (issue 69): a channel's rule over a transaction group's window fires once when its p95 (or
 * failure rate) passes the channel's threshold, through the existing channels, and names the group.
 */
import { expect, it } from 'vitest';
import { boundProject, drained, eventId, type TestContext } from './helpers/context.ts';
import { withReceiver, type Receiver } from './helpers/receiver.ts';
import { until } from './helpers/until.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
let receiver: Receiver;
withWorkers(['events', 'sessions', 'notifications'], (c) => (ctx = c), { PERF_ALERT_INTERVAL_SECONDS: '1', FLUSH_INTERVAL_MS: '100', WEBHOOK_ALLOW_PRIVATE: 'true' });
withReceiver((r) => (receiver = r));

/** An envelope of one transaction of `ms` named `name`, ending now. */
function transaction(name: string, ms: number, status = 'ok'): string {
  const end = Date.now() / 1000;
  const tx = { type: 'transaction', transaction: name, start_timestamp: end - ms / 1000, timestamp: end, contexts: { trace: { trace_id: eventId(), span_id: eventId().slice(0, 16), op: 'http.server', status } } };
  return [{ event_id: eventId() }, { type: 'transaction' }, tx].map((p) => JSON.stringify(p)).join('\n');
}

it('a group whose p95 passes the threshold is notified once, named; a fast one is not', { timeout: 60_000 }, async () => {
  const p = await boundProject(ctx);
  await ctx.runtime.notifications.add(p.id, { webhook: `${receiver.url}/perf/${p.id}`, on: ['performance.regressed'], performance: { p95_ms: 100, failure_rate: null, min_count: 3 } });
  const post = (body: string) => fetch(`${ctx.api}/api/${p.id}/envelope/?sentry_key=${p.publicKey}`, { method: 'POST', body });
  for (let i = 0; i < 4; i++) {
    expect((await post(transaction('GET /slow', 400))).status).toBe(200);
    expect((await post(transaction('GET /fast', 20))).status).toBe(200);
  }
  await drained(ctx);
  const mine = () => receiver.of('performance.regressed').filter((r) => r.path === `/perf/${p.id}`);
  await until(() => mine().length >= 1, 20_000);
  await new Promise((r) => setTimeout(r, 2500)); // two more checks: nothing more is sent while it stays slow
  expect(mine()).toHaveLength(1);
  expect(mine()[0]!.body).toMatchObject({ event: 'performance.regressed', transaction: 'GET /slow', op: 'http.server', count: 4, why: ['p95'], window_minutes: 10 });
  expect(mine()[0]!.body.p95_ms).toBeGreaterThan(300);
});
