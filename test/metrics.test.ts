/**
 * GET /metrics: every metric the operations issue names is there, and each
 * moves under traffic, including those recorded in a separate worker
 * process (published through Redis, src/metrics/fleet.ts).
 */
import type { Job } from 'bullmq';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { groupJobId } from '../src/queues/jobs/events.job.ts';
import { eventKey } from '../src/store/events.store.ts';
import { call, drained, eventId, makeProject, startTestContext, type TestContext } from './helpers/context.ts';
import { startProcess } from './helpers/process.ts';
import { until } from './helpers/until.ts';

let ctx: TestContext;
let worker: ReturnType<typeof startProcess> | undefined;
beforeAll(async () => {
  ctx = await startTestContext({ SESSIONS_RATE_LIMIT_PER_MINUTE: '5', SWEEP_GRACE_SECONDS: '1' });
});
afterAll(async () => {
  await worker?.stop();
  await ctx?.close();
});

const scrape = async () => {
  const res = await fetch(`${ctx.api}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return res.text();
};

/** The sum of the samples of `name` whose labels include `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = line.match(/^([a-z_:]+)(?:\{(.*)\})? (\S+)$/);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

const NAMES = [
  'lookout_http_request_duration_seconds',
  'lookout_ingested_total',
  'lookout_rate_limited_total',
  'lookout_job_duration_seconds',
  'lookout_job_failures_total',
  'lookout_sweeper_requeued_total',
  'lookout_queue_jobs',
  'lookout_oldest_unprocessed_seconds',
  'lookout_store_up',
  'lookout_admission_delay_seconds',
  'lookout_admission_shedding',
  'lookout_ingest_in_flight',
  'process_cpu_seconds_total',
  'nodejs_eventloop_lag_seconds',
];

it('names every metric, and each moves under traffic', async () => {
  const before = await scrape();
  for (const name of NAMES) expect(before, name).toMatch(new RegExp(`^# TYPE ${name} `, 'm'));
  expect(sample(before, 'lookout_store_up', { store: 'redis' })).toBe(1);
  expect(sample(before, 'lookout_store_up', { store: 'mongodb' })).toBe(1);

  const { secret, publicKey, project } = await makeProject(ctx);
  const at = new Date().toISOString();
  const attempt = (id: string) => ({ event_id: id, timestamp: at, security: { kind: 'login_failed', actor: 'eve', ip: '198.51.100.7' } });
  const first = eventId();
  for (const body of [attempt(first), attempt(first), attempt(eventId())]) {
    expect((await call(ctx, 'POST', '/api/v1/events', { key: secret, body })).status).toBe(202);
  }
  expect((await call(ctx, 'POST', '/api/v1/events', { key: secret, body: { event_id: 'nope' } })).status).toBe(400);

  // An event whose job was lost (as with Redis data lost): the sweeper must enqueue it. It goes in a job of its
  // own once both groups stored before it (the duplicate stored none) are in jobs.
  const events = ctx.runtime.queues.queue('events');
  await until(async () => (await events.getWaiting()).reduce((n, j) => n + (j.data as { groups: unknown[] }).groups.length, 0) === 2);
  const lost = eventId();
  expect((await call(ctx, 'POST', '/api/v1/events', { key: secret, body: attempt(lost) })).status).toBe(202);
  // a sign-in attempt's key names the group it was stored in
  const group = (await ctx.runtime.mongo.db.collection<{ _id: string; b: string }>('events').findOne({ _id: eventKey(Number(project.id), lost) }))!.b;
  let job: Job | undefined;
  await until(async () => Boolean((job = await events.getJob(groupJobId(group)))));
  await job!.remove();
  await ctx.runtime.stores.events.backlog.collection.updateOne({ _id: group }, { $set: { received_at: new Date(Date.now() - 60_000) } });

  // Sessions: one entry skipped, one resent unchanged, then the 5/min budget runs out.
  const session = { sid: 'metrics-session-1', status: 'ok', release: 'shop@1.0.0', started: at };
  const sessionPosts = [{ sessions: [session, { sid: 'x', status: 'ok', release: 'shop@1.0.0' }] }, session, session, session, session, session];
  const statuses = [];
  for (const body of sessionPosts) statuses.push((await call(ctx, 'POST', '/api/v1/sessions', { key: publicKey, body })).status);
  expect(statuses).toEqual([202, 202, 202, 202, 202, 429]);

  const queued = await scrape();
  expect(sample(queued, 'lookout_oldest_unprocessed_seconds', { kind: 'event' })).toBeGreaterThanOrEqual(59);
  // the events before it, gathered into one or two jobs by the time they were stored
  expect(sample(queued, 'lookout_queue_jobs', { queue: 'events', state: 'waiting' })).toBeGreaterThanOrEqual(1);

  // The worker is a process of its own: its figures reach this API's /metrics through Redis.
  worker = startProcess(['worker', '--queues', 'events,sessions'], { ...ctx.env, SWEEP_GRACE_SECONDS: '1', LOG_LEVEL: 'info' }, /workers started/);
  await worker.matched;
  await drained(ctx, 60_000);
  await until(async () => sample(await scrape(), 'lookout_sweeper_requeued_total', { kind: 'event' }) >= 1);
  await until(async () => sample(await scrape(), 'lookout_ingested_total', { kind: 'session', outcome: 'duplicated' }) >= 4);

  const after = await scrape();
  expect(sample(after, 'lookout_ingested_total', { kind: 'event', outcome: 'accepted' })).toBe(3);
  expect(sample(after, 'lookout_ingested_total', { kind: 'event', outcome: 'duplicated' })).toBe(1);
  expect(sample(after, 'lookout_ingested_total', { kind: 'event', outcome: 'rejected' })).toBe(1);
  expect(sample(after, 'lookout_ingested_total', { kind: 'session', outcome: 'accepted' })).toBe(5);
  // the skipped entry and the refused request
  expect(sample(after, 'lookout_ingested_total', { kind: 'session', outcome: 'rejected' })).toBe(2);
  expect(sample(after, 'lookout_ingested_total', { kind: 'session', outcome: 'duplicated' })).toBe(4);
  expect(sample(after, 'lookout_rate_limited_total', { route: '/api/v1/sessions' })).toBe(1);
  expect(sample(after, 'lookout_http_request_duration_seconds_count', { route: '/api/v1/events', status: '202' })).toBe(4);
  expect(sample(after, 'lookout_http_request_duration_seconds_count', { route: '/api/v1/events', status: '400' })).toBe(1);
  expect(sample(after, 'lookout_http_request_duration_seconds_count', { route: '/api/v1/sessions', status: '429' })).toBe(1);
  expect(sample(after, 'lookout_queue_jobs', { queue: 'events', state: 'completed' })).toBeGreaterThanOrEqual(2);
  expect(sample(after, 'lookout_oldest_unprocessed_seconds', { kind: 'event' })).toBe(0);

  // job figures come from the worker process, labelled with it
  const workerJobs = after.split('\n').filter((l) => l.startsWith('lookout_job_duration_seconds_count{') && l.includes('process="worker-'));
  expect(workerJobs.length).toBeGreaterThan(0);
  expect(sample(after, 'lookout_job_duration_seconds_count', { queue: 'events', job: 'events.process', outcome: 'completed' })).toBeGreaterThanOrEqual(2);
  expect(sample(after, 'lookout_job_duration_seconds_count', { queue: 'sessions', job: 'sessions.process', outcome: 'completed' })).toBeGreaterThanOrEqual(1);
}, 120_000);

it('keeps the route pattern, not the path, as the label', async () => {
  await call(ctx, 'GET', '/api/v1/issues/12345');
  await call(ctx, 'GET', '/no/such/path/%24where');
  const text = await scrape();
  expect(sample(text, 'lookout_http_request_duration_seconds_count', { route: '/api/v1/issues/:id' })).toBeGreaterThanOrEqual(1);
  expect(sample(text, 'lookout_http_request_duration_seconds_count', { route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
  // in no label (a sample's value may hold the digits)
  expect(text).not.toMatch(/\{[^}]*12345[^}]*\}/);
  expect(text).not.toMatch(/\{[^}]*%24where[^}]*\}/);
});
