/**
 * npm run bench:workers [-- --events N --session-requests N]
 *
 * Worker throughput for tuning (docs/tuning.md). For each configuration
 * (concurrency 1, 4, 8, 16 and 64 in one process; two and four processes at
 * concurrency 8) it starts a fresh stack with no worker, stores the same
 * backlog through the API (sign-in attempts, error events and session
 * requests of 10 sessions), then starts the workers and measures:
 * - the drain time of each queue, as events/s and sessions/s merged;
 * - job run time p50/p99 (BullMQ processedOn → finishedOn);
 * and, in the same run, the ceiling of the queue itself: a no-op BullMQ
 * worker at the same total concurrency draining as many jobs (ratio).
 */
import crypto from 'node:crypto';
import { parseArgs } from 'node:util';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { loadConfig } from '../config/index.ts';
import { makeLogger } from '../src/log.ts';
import { makeRuntime } from '../src/runtime.ts';
import { pendingJobs, report, round, spawnWorkers, startStack, stopChild, waitFor } from './lib.ts';

const { values } = parseArgs({ options: { events: { type: 'string' }, 'session-requests': { type: 'string' } }, strict: true });
const EVENTS = Number(values.events ?? 200);
const SESSION_REQUESTS = Number(values['session-requests'] ?? 50);
const SESSIONS_PER_REQUEST = 10;
const DRAIN_LIMIT_MS = 300_000;
const CONFIGS = [
  { processes: 1, concurrency: 1 },
  { processes: 1, concurrency: 4 },
  { processes: 1, concurrency: 8 },
  { processes: 1, concurrency: 16 },
  { processes: 1, concurrency: 64 },
  { processes: 2, concurrency: 8 },
  { processes: 4, concurrency: 8 },
];

const event = (i: number) =>
  i % 5 === 4
    ? { event_id: crypto.randomBytes(16).toString('hex'), timestamp: new Date().toISOString(), exception: { values: [{ type: `BenchError${i % 7}`, value: 'boom' }] }, release: 'bench@1' }
    : { event_id: crypto.randomBytes(16).toString('hex'), timestamp: new Date().toISOString(), security: { kind: i % 9 === 0 ? 'login_succeeded' : 'login_failed', actor: `user${i % 40}`, ip: `198.51.100.${i % 13}` } };
const sessions = (r: number) => ({
  sessions: Array.from({ length: SESSIONS_PER_REQUEST }, (_, k) => ({ sid: `bench-w-${r}-${k}-xxxx`, release: 'bench@1', status: k % 10 === 0 ? 'crashed' : 'ok', did: `u${(r * 7 + k) % 300}` })),
});

/** Posts every body, `lanes` at a time; all must be acknowledged. */
async function postAll(url: string, key: string, bodies: unknown[], lanes = 16): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++];
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-key': key }, body: JSON.stringify(body) });
        if (res.status !== 202) throw new Error(`${url}: ${res.status} ${await res.text()}`);
      }
    }),
  );
}

function percentile(sorted: number[], p: number): number {
  return sorted.length ? round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!) : 0;
}

/** The queue's own ceiling: a worker that does nothing, at `concurrency`, draining `jobs` jobs. */
async function noopRate(redisUrl: string, jobs: number, concurrency: number): Promise<number> {
  const prefix = `noop${Date.now()}`;
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue('noop', { connection, prefix });
  await queue.addBulk(Array.from({ length: jobs }, (_, i) => ({ name: 'noop', data: { i }, opts: { removeOnComplete: true } })));
  let done = 0;
  const t0 = performance.now();
  const workerConnection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const worker = new Worker('noop', async () => undefined, { connection: workerConnection, prefix, concurrency });
  worker.on('completed', () => void (done += 1));
  await waitFor(async () => done >= jobs, 60_000);
  const rate = jobs / ((performance.now() - t0) / 1000);
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  workerConnection.disconnect();
  connection.disconnect();
  return round(rate);
}

async function runConfig(cfg: { processes: number; concurrency: number }) {
  const stack = await startStack({ seconds: 0, concurrency: 16, workers: 0, workerConcurrency: cfg.concurrency });
  const runtime = await makeRuntime(loadConfig(stack.env), { redisUrl: stack.redisUrl, mongoUrl: stack.mongoUrl }, makeLogger('warn', 'bench'));
  try {
    const org = await runtime.admin.createOrg({ name: 'Bench', plan: 'business', seats: null });
    const project = await runtime.admin.createProject({ org: Number(org.id), name: 'bench', securityMonitoring: true });
    await postAll(`${stack.apiUrl}/api/v1/events`, project.secret_key, Array.from({ length: EVENTS }, (_, i) => event(i)));
    await postAll(`${stack.apiUrl}/api/v1/sessions`, project.public_key, Array.from({ length: SESSION_REQUESTS }, (_, r) => sessions(r)));
    await runtime.sessions.drain();

    const queues = { events: runtime.queues.queue('events'), sessions: runtime.queues.queue('sessions') };
    const batches = await pendingJobs(queues.sessions);
    const t0 = performance.now();
    const workers = await spawnWorkers(stack.env, cfg.processes, cfg.concurrency);
    const ready = round((performance.now() - t0) / 1000);
    const [eventsSeconds, sessionsSeconds] = await Promise.all([
      waitFor(async () => (await pendingJobs(queues.events)) === 0, DRAIN_LIMIT_MS),
      waitFor(async () => (await pendingJobs(queues.sessions)) === 0, DRAIN_LIMIT_MS),
    ]);
    await Promise.all(workers.map((w) => stopChild(w)));

    const runTimes = async (q: Queue) =>
      (await q.getJobs(['completed'], 0, -1)).map((j) => (j.finishedOn ?? 0) - (j.processedOn ?? 0)).sort((a, b) => a - b);
    const eventTimes = await runTimes(queues.events);
    const sessionTimes = await runTimes(queues.sessions);
    const noop = await noopRate(stack.redisUrl, EVENTS, cfg.processes * cfg.concurrency);
    const eventsPerS = eventsSeconds ? round(EVENTS / eventsSeconds) : null;
    return {
      ...cfg,
      workers_ready_s: ready,
      events: { jobs: EVENTS, drain_s: eventsSeconds, per_s: eventsPerS, run_p50_ms: percentile(eventTimes, 50), run_p99_ms: percentile(eventTimes, 99) },
      sessions: {
        sessions: SESSION_REQUESTS * SESSIONS_PER_REQUEST,
        batches,
        drain_s: sessionsSeconds,
        per_s: sessionsSeconds ? round((SESSION_REQUESTS * SESSIONS_PER_REQUEST) / sessionsSeconds) : null,
        run_p50_ms: percentile(sessionTimes, 50),
        run_p99_ms: percentile(sessionTimes, 99),
      },
      noop_jobs_per_s: noop,
      events_ratio_to_noop: eventsPerS ? round(eventsPerS / noop, 4) : null,
    };
  } finally {
    await runtime.mongo.db.dropDatabase().catch(() => {});
    await runtime.close();
    await stack.stop();
  }
}

const results = [];
for (const cfg of CONFIGS) {
  process.stderr.write(`bench:workers: ${cfg.processes} process(es) × concurrency ${cfg.concurrency}…\n`);
  results.push(await runConfig(cfg));
}
report(
  'bench:workers',
  { store: process.env.MONGODB_URL ? 'given MONGODB_URL' : 'embedded FerretDB 1.24 (SQLite)', events: EVENTS, session_requests: SESSION_REQUESTS, results },
  results.map((r) => [
    `${r.processes}×${r.concurrency}`,
    `events ${r.events.per_s ?? 'n/a'}/s (run p50 ${r.events.run_p50_ms} ms, p99 ${r.events.run_p99_ms} ms; ${r.events_ratio_to_noop ?? 'n/a'} of no-op ${r.noop_jobs_per_s}/s) · sessions ${r.sessions.per_s ?? 'n/a'}/s in ${r.sessions.batches} batches (run p50 ${r.sessions.run_p50_ms} ms)`,
  ]),
);
process.exit(0);
