/**
 * bench:build: the compiled server (dist/server/lookout.mjs, what `npm start` and the image run) beside the sources
 * under tsx, in one sitting, rounds alternating which goes first. For each: the API's time from its spawn to
 * `/readyz` 200 on running stores, and its CPU per accepted error event over a steady stream (native
 * `POST /api/v1/events`, 16 keep-alive connections, after a warm-up of 300), with its memory after.
 *
 *   npm run bench:build [-- --rounds 3 --events 3000]
 */
import fs from 'node:fs';
import http from 'node:http';
import { parseArgs } from 'node:util';
import { realisticErrorEvent } from './events.ts';
import { BENCH_INSTANCE, cpuMsOf, hostWorkMs, openBench, report, round, type Build } from './lib.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string' }, events: { type: 'string' } }, strict: true });
const ROUNDS = Number(values.rounds ?? 3);
const EVENTS = Number(values.events ?? 3000);
const WARM_UP = 300;
const CONNECTIONS = 16;
const progress = (line: string) => process.stderr.write(`bench:build: ${line}\n`);

interface Sample {
  ready_ms: number;
  cpu_us_per_event: number;
  accepted: number;
  rss_mb: number;
}

/** Sends `count` error events over CONNECTIONS keep-alive connections; answers how many were accepted (202). */
async function send(url: URL, headers: Record<string, string>, count: number, from: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const template = realisticErrorEvent(0, { at: new Date(), release: 'build@1', environment: 'production', company: 'bench' });
  let next = 0;
  let accepted = 0;
  const one = (i: number) =>
    new Promise<void>((resolve) => {
      const body = JSON.stringify({ ...template, event_id: (from + i).toString(16).padStart(32, '0'), timestamp: new Date().toISOString() });
      const req = http.request(
        { host: url.hostname, port: url.port, path: '/api/v1/events', method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
        (res) => res.resume().on('end', () => {
          if (res.statusCode === 202) accepted += 1;
          resolve();
        }),
      );
      req.on('error', () => resolve());
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < count) await one(next++);
    }),
  );
  agent.destroy();
  return accepted;
}

async function measure(build: Build, index: number): Promise<Sample> {
  const env = await openBench({ seconds: 0, concurrency: 1, workers: 1, workerConcurrency: 4, build });
  try {
    const { stack, project } = env;
    const url = new URL(stack.apiUrl);
    const listening = performance.now();
    while ((await fetch(`${stack.apiUrl}/readyz`).then((r) => r.status, () => 0)) !== 200) await new Promise((r) => setTimeout(r, 5));
    const ready_ms = stack.apiStartMs() + (performance.now() - listening);
    const headers = { 'content-type': 'application/json', 'x-service-key': project.secret_key, 'x-service-instance': BENCH_INSTANCE };
    const base = index * 1_000_000;
    await send(url, headers, WARM_UP, base);
    const api = stack.processes().find((p) => p.role === 'api')!.pid;
    const before = cpuMsOf(api)!;
    const accepted = await send(url, headers, EVENTS, base + WARM_UP);
    const cpu = cpuMsOf(api)! - before;
    const rss = fs.readFileSync(`/proc/${api}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)![1]!;
    return { ready_ms: Math.round(ready_ms), cpu_us_per_event: round((cpu * 1000) / Math.max(1, accepted), 0), accepted, rss_mb: Math.round(Number(rss) / 1024) };
  } finally {
    await env.close();
  }
}

const baseline = hostWorkMs();
const samples: Record<Build, Sample[]> = { tsx: [], compiled: [] };
for (let r = 0; r < ROUNDS; r++) {
  const order: Build[] = r % 2 === 0 ? ['tsx', 'compiled'] : ['compiled', 'tsx'];
  for (const build of order) {
    const s = await measure(build, r * 2 + order.indexOf(build));
    samples[build].push(s);
    progress(`round ${r + 1} ${build}: ready ${s.ready_ms} ms, ${s.cpu_us_per_event} µs CPU per event (${s.accepted} of ${EVENTS} accepted), RSS ${s.rss_mb} MB`);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const summary = (build: Build) => ({
  ready_ms: median(samples[build].map((s) => s.ready_ms)),
  cpu_us_per_event: median(samples[build].map((s) => s.cpu_us_per_event)),
  rss_mb: median(samples[build].map((s) => s.rss_mb)),
});
const tsx = summary('tsx');
const compiled = summary('compiled');
report(
  'bench:build',
  { host_work_ms: baseline, rounds: ROUNDS, events: EVENTS, samples, tsx, compiled },
  [
    ['host work baseline (ms)', baseline],
    ['API spawn → /readyz 200, tsx (ms, median)', tsx.ready_ms],
    ['API spawn → /readyz 200, compiled (ms, median)', compiled.ready_ms],
    ['API CPU per accepted event, tsx (µs, median)', tsx.cpu_us_per_event],
    ['API CPU per accepted event, compiled (µs, median)', compiled.cpu_us_per_event],
    ['API RSS after, tsx / compiled (MB)', `${tsx.rss_mb} / ${compiled.rss_mb}`],
  ],
);
