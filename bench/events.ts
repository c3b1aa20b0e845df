/**
 * npm run bench:events [-- --seconds N --concurrency N --workers N --worker-concurrency N]
 *
 * Sign-in events through POST /api/v1/events: accepted events/s, p50/p99,
 * events/s fully processed (queue drained), and detection lag (from the 202
 * of the attempt that crosses the threshold to the issue being readable
 * through GET /api/v1/issues), next to a bare Node HTTP server measured in
 * the same run.
 */
import crypto from 'node:crypto';
import { benchArgs, DRAIN_LIMIT_MS, openBench, pendingJobs, report, round, runLoad, waitFor } from './lib.ts';

const args = benchArgs();
const attempt = (i: number, actor = `user${i % 2000}@bench.example`, ip = `198.51.${(i >> 8) & 255}.${i & 255}`) =>
  JSON.stringify({
    event_id: crypto.randomBytes(16).toString('hex'),
    timestamp: new Date().toISOString(),
    platform: 'php',
    security: { kind: i % 7 === 0 ? 'login_succeeded' : 'login_failed', actor, ip, user_agent: 'bench/1.0' },
  });

const bench = await openBench(args, '/api/v1/events', (i) => attempt(i));
const { baseline, stack, runtime, project } = bench;
try {
  const headers = { 'content-type': 'application/json', 'x-service-key': project.secret_key };
  const url = `${stack.apiUrl}/api/v1/events`;
  const queue = runtime.queues.queue('events');
  const pending = () => pendingJobs(queue);

  const backlog: number[] = [];
  const sampler = setInterval(() => void pending().then((n) => backlog.push(n)), 1000);
  const loadStart = performance.now();
  const load = await runLoad({ url, headers, body: (i) => attempt(i), seconds: args.seconds, concurrency: args.concurrency });
  clearInterval(sampler);
  const drainSeconds = await waitFor(async () => (await pending()) === 0, DRAIN_LIMIT_MS);
  const processedPerS = round(load.accepted / ((performance.now() - loadStart) / 1000));

  // Detection lag: four failures of a fresh (actor, ip), then the fifth; time from its 202 to the issue.
  const actor = `lag-${Date.now()}@bench.example`;
  const post = (body: string) => fetch(url, { method: 'POST', headers, body });
  for (let i = 0; i < 4; i++) await post(JSON.stringify({ event_id: crypto.randomBytes(16).toString('hex'), timestamp: new Date().toISOString(), security: { kind: 'login_failed', actor, ip: '203.0.113.99' } }));
  await post(JSON.stringify({ event_id: crypto.randomBytes(16).toString('hex'), timestamp: new Date().toISOString(), security: { kind: 'login_failed', actor, ip: '203.0.113.99' } }));
  const lag = await waitFor(async () => {
    const res = await fetch(`${stack.apiUrl}/api/v1/issues?limit=500`, { headers: { 'x-service-key': project.secret_key } });
    const body = (await res.json()) as { issues: { title: string }[] };
    return body.issues.some((i) => i.title.includes(actor));
  }, 60_000);

  const result = {
    args,
    store: process.env.MONGODB_URL ? 'given MONGODB_URL' : 'embedded FerretDB 1.24 (SQLite)',
    baseline_bare_http: { requests_per_s: baseline.requests_per_s, p50_ms: baseline.p50_ms, p99_ms: baseline.p99_ms },
    accepted: { ...load, ratio_to_bare: round(load.requests_per_s / baseline.requests_per_s, 3) },
    processed: { events_per_s: drainSeconds === null ? null : processedPerS, drain_seconds_after_load: drainSeconds, backlog_left: await pending(), backlog_samples: backlog },
    detection_lag_s: lag,
  };
  report('bench:events', result, [
    ['bare HTTP 202 (req/s)', baseline.requests_per_s],
    ['accepted events/s', load.requests_per_s],
    ['ratio to bare', result.accepted.ratio_to_bare],
    ['p50 / p99 ms', `${load.p50_ms} / ${load.p99_ms}`],
    ['fully processed events/s', processedPerS],
    ['drain after load (s)', drainSeconds],
    ['backlog samples (jobs)', backlog.join(' ')],
    ['detection lag (s)', lag],
  ]);
} finally {
  await bench.close();
}
