/**
 * npm run bench:pipeline -- [--seconds 30] [--warmup 5] [--scenario sessions|events|all|step]
 *                           [--session-rate 5000] [--single-rate 500] [--event-rate 1000]
 *                           [--redis-cluster]
 *
 * Drives fixed offered rates (open loop: requests leave on a timetable,
 * whatever the answers do) against a stack of its own over loopback, then
 * measures how long after the last request every accepted item is reflected:
 * sessions in the MongoDB rollups (checked equal to a recount of the raw
 * batches), events in issues and bursts. Each load starts on a freshly
 * started stack with `--warmup` seconds at the same rates, reported apart
 * (a new process compiles its code and fills its caches first); the figures
 * measured are the `--seconds` after it. Beside it, in the same run: a bare
 * Node HTTP server at the same rates, and the raw store and queue
 * (`insertMany` + `addBulk`) at full speed.
 *
 * The events load also exercises notifications: a webhook channel for
 * security bursts on a receiver in this process, and once a second a probe,
 * an error event of a new issue in one of five `probe-<n>` environments, each
 * heard by a channel of its own (so no channel passes noise control's 10 a
 * minute); the time from each probe's 202 to its notification is reported.
 *
 * `--scenario step` raises the session rate until a step misses its targets.
 *
 * `--redis-cluster` runs the same loads on a local Redis Cluster (three
 * primaries, a replica each, src/embedded/redis-cluster.ts) with two API
 * processes (requests alternate between them) and two worker processes.
 *
 * `--sourcemaps` makes the error events browser events thrown in a minified bundle whose source map (about 2 MB)
 * was uploaded first: the worker maps each one's frames before grouping, and the run prints what that cost it per
 * event (from the workers' `lookout_sourcemap_event_seconds`).
 *
 * `--trace FILE` appends one CSV line per request (load, stream, when it was
 * due as epoch ms, latency ms, status), to find when a stall happened and set
 * it beside other samples (process CPU, Redis INFO) taken with wall-clock time.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { connectRedis } from '../src/redis/connect.ts';
import { emptyState, replayPart } from '../src/domain/release-health.ts';
import { total } from '../src/domain/sessions.ts';
import { partsOf } from '../src/state/rebuild.ts';
import type { Runtime } from '../src/runtime.ts';
import { exceptionType } from './events.ts';
import { eventStream, makeProbes, openLoop, PROBE_CHANNELS, PROBE_KIND, sessionStreams, type OpenLoopResult, type Probes, type Stream } from './load.ts';
import { BENCH_INSTANCE, hostUse, hostUseWords, hostWorkMs, openBench, refusalsByReason, report, round, startBareServer, waitFor, type Stack } from './lib.ts';
import { uploadBrowserBundle } from './sourcemaps.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string' },
    warmup: { type: 'string' },
    scenario: { type: 'string' },
    'session-rate': { type: 'string' },
    'single-rate': { type: 'string' },
    'event-rate': { type: 'string' },
    'worker-concurrency': { type: 'string' },
    trace: { type: 'string' },
    'redis-cluster': { type: 'boolean' },
    sourcemaps: { type: 'boolean' },
  },
  strict: true,
});
const SECONDS = Number(values.seconds ?? 30);
const WARMUP_SECONDS = Number(values.warmup ?? 5);
const SCENARIO = values.scenario ?? 'all';
const TRACE_FILE = values.trace;
const SESSION_RATE = Number(values['session-rate'] ?? 5000);
const SINGLE_RATE = Number(values['single-rate'] ?? 500);
const EVENT_RATE = Number(values['event-rate'] ?? 1000);
const CLUSTER = values['redis-cluster'] === true;
const SOURCEMAPS = values.sourcemaps === true;
const benchSettings = { seconds: SECONDS, concurrency: 1, workers: CLUSTER ? 2 : 1, apis: CLUSTER ? 2 : 1, redisCluster: CLUSTER, workerConcurrency: Number(values['worker-concurrency'] ?? 4) };
/** How long after the last request the pipeline has to reflect everything: the target is 2 s; past this the run reports a miss. */
const SETTLE_LIMIT_MS = 60_000;

/** Seconds from now until the sessions backlog is empty (every accepted batch applied and flushed), or null. */
async function sessionsSettled(runtime: Runtime): Promise<number | null> {
  return waitFor(async () => (await runtime.stores.sessions.backlog.size()) === 0, SETTLE_LIMIT_MS);
}

/** Whether the flushed rollups equal a recount of the raw batches, and how many sessions they hold. */
async function sessionsExact(runtime: Runtime, project: number, windowMs: number) {
  const counted = emptyState();
  for await (const { batch: b } of runtime.stores.sessions.batchesOf(project)) replayPart(project, counted, b._id, partsOf(b).get(project)!, b.received_at, windowMs);
  const stored = await runtime.stores.sessions.releases.find({ project_id: project }).toArray();
  const equal =
    stored.length === counted.releases.size &&
    stored.every((d) => {
      const c = counted.releases.get(d._id);
      return c && JSON.stringify([d.sessions, d.users]) === JSON.stringify([c.sessions, c.users]);
    });
  return { equal, sessions_in_rollups: stored.reduce((n, d) => n + total(d.sessions), 0) };
}

async function eventsSettled(runtime: Runtime): Promise<number | null> {
  return waitFor(async () => (await runtime.stores.events.backlog.size()) === 0, SETTLE_LIMIT_MS);
}

/** The raw store and queue at full speed: 100-session batches through insertMany and addBulk, no HTTP. */
async function rawBaseline(stack: Stack, runtime: Runtime, seconds: number) {
  const scratch = runtime.mongo.db.collection<{ _id: string; received_at: Date; body: string }>('bench_raw');
  const redis = connectRedis(runtime.redisTarget, { maxRetriesPerRequest: null });
  const queue = new Queue('bench-raw', { connection: redis, prefix: `${stack.env.QUEUE_PREFIX}-raw` });
  const [batch] = sessionStreams(100, 1);
  let sessions = 0;
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) {
    const docs = Array.from({ length: 20 }, (_, i) => ({ _id: crypto.randomBytes(12).toString('hex'), received_at: new Date(), body: batch!.body(i) }));
    await scratch.insertMany(docs);
    await queue.addBulk(docs.map((d) => ({ name: 'raw', data: { id: d._id } })));
    sessions += docs.length * 100;
  }
  const elapsed = (performance.now() - start) / 1000;
  await queue.obliterate({ force: true });
  await queue.close();
  redis.disconnect();
  await scratch.drop();
  return { sessions_per_s: round(sessions / elapsed) };
}

/** Requests answered 2xx, warm-up included (all of them are stored and must be reflected). */
const accepted2xx = (r: OpenLoopResult) => r.sent - r.non_2xx + r.warmup.sent - r.warmup.non_2xx;
const allAccepted = (r: OpenLoopResult) => r.non_2xx === 0 && r.warmup.non_2xx === 0;

/** One run of session load at `rate` (+ singles); what the API answered and how long the pipeline took to catch up. */
async function sessionsRun(rate: number, singleRate: number) {
  const env = await openBench(benchSettings);
  try {
    progress(`sessions: ${rate}/s in batches and ${singleRate}/s singles for ${WARMUP_SECONDS} + ${SECONDS} s, starting ${round((performance.now() - env.stack.listeningAt()) / 1000, 1)} s after the API's listening line`);
    const use = hostUse(env.stack);
    const load = await openLoop(`lookout sessions ${rate}/s`, env.stack.apiUrls, { 'content-type': 'application/json', 'x-service-key': env.project.public_key }, sessionStreams(rate, singleRate), SECONDS, WARMUP_SECONDS, TRACE_FILE);
    const host = use();
    const refused_by = await refusalsByReason(env.stack.apiUrls[0]!);
    progress('sessions: load over, waiting for the pipeline');
    const settle = await sessionsSettled(env.runtime);
    if (settle === null) await reportFailures(env.runtime, 'sessions');
    const exact = await sessionsExact(env.runtime, Number(env.project.id), env.config.sessionUpdateWindowMs);
    const accepted = accepted2xx(load['session batches']!) * 100 + accepted2xx(load['single sessions']!);
    const targets =
      allAccepted(load['session batches']!) && allAccepted(load['single sessions']!) && load['single sessions']!.p99_ms < 50 && load['session batches']!.p99_ms < 200 && settle !== null && settle <= 2 && exact.equal;
    return { offered_sessions_per_s: rate + singleRate, load, host, refused_by, settled_seconds_after_last_request: settle, accepted_sessions: accepted, ...exact, targets_met: targets, baseline: await rawBaseline(env.stack, env.runtime, 5) };
  } finally {
    await env.close();
  }
}

/** When the pipeline did not settle: the queue's counts and the reasons of its failed jobs. */
async function reportFailures(runtime: Runtime, queue: 'events' | 'sessions') {
  const q = runtime.queues.queue(queue);
  const failed = await q.getFailed(0, 4);
  progress(`${queue}: did not settle; jobs ${JSON.stringify(await q.getJobCounts())}; failures: ${JSON.stringify(failed.map((j) => j.failedReason))}`);
}

/** Progress on stderr, so a long run shows where it is. */
const progress = (what: string) => process.stderr.write(`bench:pipeline ${new Date().toISOString()} ${what}\n`);

/** A webhook receiver in this process: probes' notifications by probe number and arrival, bursts and digests counted. */
async function startProbeReceiver(probes: Probes) {
  const byType = new Map(Array.from({ length: (SECONDS + WARMUP_SECONDS + 5) * 2 }, (_, n) => [exceptionType(PROBE_KIND + n), n]));
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const at = Date.now();
      const body = JSON.parse(raw) as { event: string; issue?: { title: string } };
      if (body.event === 'security.burst') probes.bursts += 1;
      else if (body.event === 'digest') probes.digests += 1;
      const n = body.event === 'issue.created' ? byType.get(body.issue!.title.split(':')[0]!) : undefined;
      if (n !== undefined) probes.notified.set(n, at);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** From each probe's 202 to its notification, once the last is in (or `limitMs` passed). */
async function probeLatencies(probes: Probes, limitMs: number) {
  await waitFor(async () => [...probes.answered.keys()].every((n) => probes.notified.has(n)), limitMs);
  const ms = [...probes.answered].filter(([n]) => probes.notified.has(n)).map(([n, at]) => probes.notified.get(n)! - at).sort((a, b) => a - b);
  const pct = (p: number) => ms[Math.min(ms.length - 1, Math.floor((p / 100) * ms.length))] ?? null;
  return { probes: probes.answered.size, notified: ms.length, p50_ms: pct(50), p99_ms: pct(99), bursts_notified: probes.bursts, digests: probes.digests };
}

async function eventsRun(rate: number) {
  const env = await openBench(benchSettings, { WEBHOOK_ALLOW_PRIVATE: 'true' });
  const probes = makeProbes();
  const receiver = await startProbeReceiver(probes);
  try {
    const project = Number(env.project.id);
    for (let n = 0; n < PROBE_CHANNELS; n++) await env.runtime.notifications.add(project, { webhook: `${receiver.url}/probe-${n}`, on: ['issue.created'], environment: `probe-${n}` });
    await env.runtime.notifications.add(project, { webhook: `${receiver.url}/bursts`, on: ['security.burst'] });
    const browser = SOURCEMAPS ? await uploadBrowserBundle(env.runtime, project) : undefined;
    if (browser) progress(`events: the error events are browser events mapped through a ${round(browser.mapBytes / 1024 / 1024, 2)} MB source map`);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // the workers' channel cache
    progress(`events: ${rate}/s for ${WARMUP_SECONDS} + ${SECONDS} s, starting ${round((performance.now() - env.stack.listeningAt()) / 1000, 1)} s after the API's listening line`);
    const use = hostUse(env.stack);
    const load = await openLoop('lookout events', env.stack.apiUrls, { 'content-type': 'application/json', 'x-service-key': env.project.secret_key, 'x-service-instance': BENCH_INSTANCE }, [eventStream(rate, probes, { browser })], SECONDS, WARMUP_SECONDS, TRACE_FILE);
    const host = use();
    const refused_by = await refusalsByReason(env.stack.apiUrls[0]!);
    progress('events: load over, waiting for the pipeline');
    const settle = await eventsSettled(env.runtime);
    if (settle === null) await reportFailures(env.runtime, 'events');
    const mapping = browser ? await mappingCost(env.stack.apiUrls[0]!) : null;
    const notifications = await probeLatencies(probes, 30_000);
    const issues = await env.runtime.stores.issues.ofProject(project);
    const ev = load.events!;
    return {
      load,
      host,
      refused_by,
      settled_seconds_after_last_request: settle,
      issues: { error: issues.filter((i) => i.kind === 'error').length, security: issues.filter((i) => i.kind === 'security').length, error_events_counted: issues.filter((i) => i.kind === 'error').reduce((n, i) => n + i.event_count, 0) },
      notifications,
      ...(mapping && { sourcemaps: mapping }),
      targets_met: allAccepted(ev) && ev.p99_ms < 50 && settle !== null && settle <= 2,
      notification_target_met: notifications.notified === notifications.probes && notifications.p99_ms !== null && notifications.p99_ms < 5000,
    };
  } finally {
    await receiver.close();
    await env.close();
  }
}

/** What mapping frames cost the workers, from the fleet's metrics (published every 5 s): per event, and the frames. */
async function mappingCost(apiUrl: string) {
  await new Promise((resolve) => setTimeout(resolve, 6000));
  const text = await (await fetch(`${apiUrl}/metrics`)).text();
  const sum = (pattern: RegExp) => text.split('\n').filter((l) => pattern.test(l)).reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
  const events = sum(/^lookout_sourcemap_event_seconds_count/);
  return {
    events_mapped: events,
    mean_ms_per_event: events ? round((sum(/^lookout_sourcemap_event_seconds_sum/) / events) * 1000, 3) : null,
    frames_mapped: sum(/^lookout_sourcemap_frames_total\{[^}]*result="mapped"/),
    frames_not_mapped: sum(/^lookout_sourcemap_frames_total\{/) - sum(/^lookout_sourcemap_frames_total\{[^}]*result="mapped"/),
  };
}

async function bareRun(streams: Stream[]) {
  progress('baseline: bare server');
  const bare = await startBareServer();
  try {
    return await openLoop('bare server', [bare.url], { 'content-type': 'application/json' }, streams, Math.min(SECONDS, 10), WARMUP_SECONDS, TRACE_FILE);
  } finally {
    await bare.stop();
  }
}

const STACK = CLUSTER ? 'Redis Cluster (3 primaries, 3 replicas), 2 API and 2 worker processes' : 'one redis-server, 1 API and 1 worker process';
const HOST_WORK = hostWorkMs();
const result: Record<string, unknown> = { seconds: SECONDS, stack: STACK, host_work_ms: HOST_WORK };
const rows: [string, string | number | null][] = [['stack', STACK], ['host work baseline (ms)', HOST_WORK]];
const refusals = (by: Record<string, number>) => Object.entries(by).map(([reason, n]) => `${reason} ${n}`).join(', ') || 'none';
const line = (name: string, r: OpenLoopResult) =>
  rows.push([
    name,
    `${r.offered_per_s} req/s offered, ${r.non_2xx} non-2xx, p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms` +
      (r.warmup.sent > 0 ? ` (warm-up: ${r.warmup.non_2xx} non-2xx, p50 ${r.warmup.p50_ms} ms, p99 ${r.warmup.p99_ms} ms)` : ''),
  ]);

if (SCENARIO === 'sessions' || SCENARIO === 'all') {
  const bare = await bareRun(sessionStreams(SESSION_RATE, SINGLE_RATE));
  const run = await sessionsRun(SESSION_RATE, SINGLE_RATE);
  result.sessions = { ...run, bare };
  line('bare server: session batches', bare['session batches']!);
  line('bare server: single sessions', bare['single sessions']!);
  line('lookout: session batches', run.load['session batches']!);
  line('lookout: single sessions', run.load['single sessions']!);
  rows.push(['host while loaded', hostUseWords(run.host)]);
  rows.push(['refused, by reason', refusals(run.refused_by)]);
  rows.push(['sessions accepted / in rollups', `${run.accepted_sessions} / ${run.sessions_in_rollups} (rollups equal a recount: ${run.equal})`]);
  rows.push(['sessions settled after last request (s)', run.settled_seconds_after_last_request]);
  rows.push(['raw insertMany + addBulk (sessions/s)', run.baseline.sessions_per_s]);
  rows.push(['sessions targets met', String(run.targets_met)]);
}
if (SCENARIO === 'events' || SCENARIO === 'all') {
  const bare = await bareRun([eventStream(EVENT_RATE)]);
  const run = await eventsRun(EVENT_RATE);
  result.events = { ...run, bare };
  line('bare server: events', bare.events!);
  line('lookout: events', run.load.events!);
  rows.push(['host while loaded', hostUseWords(run.host)]);
  rows.push(['refused, by reason', refusals(run.refused_by)]);
  rows.push(['events settled after last request (s)', run.settled_seconds_after_last_request]);
  if (run.sourcemaps) {
    const m = run.sourcemaps;
    rows.push(['source maps: worker time per mapped event', `${m.mean_ms_per_event} ms over ${m.events_mapped} events; frames mapped ${m.frames_mapped}, not ${m.frames_not_mapped}`]);
  }
  rows.push(['issues (error / security)', `${run.issues.error} / ${run.issues.security}`]);
  rows.push(['events targets met', String(run.targets_met)]);
  const n = run.notifications;
  rows.push(['202 to notification (probes)', `${n.notified} of ${n.probes} notified, p50 ${n.p50_ms} ms, p99 ${n.p99_ms} ms`]);
  rows.push(['burst notifications / digests', `${n.bursts_notified} / ${n.digests}`]);
  rows.push(['notification target met (p99 < 5 s)', String(run.notification_target_met)]);
}
if (SCENARIO === 'step') {
  const steps: unknown[] = [];
  for (const rate of [5000, 7500, 10_000, 12_500, 15_000]) {
    const run = await sessionsRun(rate, SINGLE_RATE);
    steps.push(run);
    line(`step ${rate}/s: session batches`, run.load['session batches']!);
    line(`step ${rate}/s: single sessions`, run.load['single sessions']!);
    rows.push([`step ${rate}/s: settled (s), exact`, `${run.settled_seconds_after_last_request}, ${run.equal}`]);
    rows.push([`step ${rate}/s: host`, hostUseWords(run.host)]);
    if (!run.targets_met) break;
  }
  result.steps = steps;
}
report('bench:pipeline', result, rows);
