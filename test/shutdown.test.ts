/**
 * Graceful shutdown under load, with the real entry points as processes:
 * SIGTERM to `lookout api` while clients post, and SIGTERM to `lookout
 * worker` while it has jobs running. Nothing acknowledged is lost, both exit
 * 0 within the deadline, and no job is left active.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, drained, eventId, makeProject, sessionStatuses, startTestContext, type TestContext } from './helpers/context.ts';
import { startProcess } from './helpers/process.ts';

const SHUTDOWN_TIMEOUT_MS = 8000;
let ctx: TestContext;
const procs: ReturnType<typeof startProcess>[] = [];
beforeAll(async () => {
  ctx = await startTestContext({ SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) });
});
afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop('SIGKILL')));
  await ctx?.close();
});

function start(args: string[], ready: RegExp) {
  const proc = startProcess(args, { ...ctx.env, LOG_LEVEL: 'info', PORT: '0', SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) }, ready);
  procs.push(proc);
  return proc;
}
const exited = (proc: ReturnType<typeof startProcess>) =>
  new Promise<{ code: number | null; ms: number }>((resolve) => {
    const t0 = Date.now();
    if (proc.child.exitCode !== null) resolve({ code: proc.child.exitCode, ms: 0 });
    proc.child.once('exit', (code) => resolve({ code, ms: Date.now() - t0 }));
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('SIGTERM to the API under load: in-flight requests finish, nothing acknowledged is lost', async () => {
  const { secret, publicKey, project: { id } } = await makeProject(ctx);
  const project = Number(id);
  const api = start(['api'], /API listening on (http:\/\/\S+)/);
  const url = (await api.matched)[1]!;

  const acked = { events: [] as string[], sessions: [] as string[] };
  const answers = new Map<number, number>();
  let refused = 0;
  let stop = false;
  const client = async (n: number) => {
    for (let i = 0; !stop; i++) {
      const isEvent = i % 2 === 0;
      const id = isEvent ? eventId() : `shutdown-${n}-${i}-${Date.now()}`;
      const body = isEvent
        ? { event_id: id, timestamp: new Date().toISOString(), exception: { values: [{ type: 'ShutdownError', value: 'x' }] }, fingerprint: ['shutdown'] }
        : { sid: id, status: 'ok', release: 'shop@1.0.0' };
      try {
        const res = await fetch(`${url}${isEvent ? '/api/v1/events' : '/api/v1/sessions'}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-service-key': isEvent ? secret : publicKey },
          body: JSON.stringify(body),
        });
        await res.text();
        answers.set(res.status, (answers.get(res.status) ?? 0) + 1);
        if (res.status === 202) (isEvent ? acked.events : acked.sessions).push(id);
      } catch {
        refused += 1; // the listener is closed: not acknowledged, a client retries elsewhere
        await sleep(20);
      }
    }
  };
  const clients = Array.from({ length: 8 }, (_, n) => client(n));
  await sleep(1500);
  const before = acked.events.length + acked.sessions.length;
  const exit = exited(api);
  api.child.kill('SIGTERM');
  const { code, ms } = await exit;
  stop = true;
  await Promise.all(clients);

  expect(code).toBe(0);
  expect(ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS + 2000);
  expect(before).toBeGreaterThan(20);
  expect(refused).toBeGreaterThan(0);
  // every answer was a 202: no request was cut off with a 5xx
  expect([...answers.keys()]).toEqual([202]);

  // a worker processes what was acknowledged: all of it is there
  start(['worker', '--queues', 'events,sessions'], /workers started/);
  await drained(ctx, 90_000);
  const events = await ctx.runtime.stores.events.collection.find({ event_id: { $in: acked.events } }, { projection: { event_id: 1 } }).toArray();
  expect(events.length).toBe(acked.events.length);
  expect(await ctx.runtime.stores.events.backlog.size()).toBe(0);
  expect((await sessionStatuses(ctx, project, acked.sessions)).size).toBe(acked.sessions.length);
}, 150_000);

it('SIGTERM to a worker with jobs running: it finishes them, exits 0 and leaves no job active', async () => {
  const { secret } = await makeProject(ctx);
  // the worker of the first test is still running: stop it, then queue work with no worker
  await Promise.all(procs.map((p) => p.stop()));
  const posted = [];
  for (let i = 0; i < 60; i++) {
    posted.push(
      call(ctx, 'POST', '/api/v1/events', {
        key: secret,
        body: { event_id: eventId(), timestamp: new Date().toISOString(), security: { kind: 'login_failed', actor: `user${i % 4}`, ip: '203.0.113.9' } },
      }),
    );
  }
  expect((await Promise.all(posted)).every((r) => r.status === 202)).toBe(true);

  const events = ctx.runtime.queues.queue('events');
  const completed = async () => (await events.getJobCounts('completed')).completed ?? 0;
  const earlier = await completed(); // the first test's jobs
  const worker = start(['worker', '--queues', 'events', '--concurrency', '8'], /workers started/);
  await worker.matched;
  const deadline = Date.now() + 30_000;
  while ((await completed()) - earlier < 5 && Date.now() < deadline) await sleep(20);
  const doneBefore = (await completed()) - earlier;
  const exit = exited(worker);
  worker.child.kill('SIGTERM');
  const { code, ms } = await exit;
  expect(code).toBe(0);
  expect(ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS + 2000);
  const counts = await events.getJobCounts('active', 'waiting', 'completed', 'failed');
  expect(counts.active).toBe(0);
  expect(counts.failed).toBe(0);
  expect(doneBefore).toBeLessThan(60); // it was stopped mid-work
  expect(worker.output()).toMatch(/worker shutting down/);

  // another worker takes the rest; counts stay exact
  start(['worker', '--queues', 'events'], /workers started/);
  await drained(ctx, 90_000);
  const list = (await call(ctx, 'GET', '/api/v1/issues?limit=500', { key: secret })).body;
  const total = list.issues.reduce((n: number, i: { event_count: number }) => n + i.event_count, 0);
  expect(list.issues).toHaveLength(4); // one burst per actor
  expect(total).toBe(60);
}, 150_000);
