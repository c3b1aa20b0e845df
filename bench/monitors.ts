/**
 * npm run bench:monitors -- [--monitors 10000] [--probes 500] [--minutes 3]
 *
 * Cron monitors and uptime probes at scale (issue 68), against a stack of its own (one API, one worker process,
 * defaults as shipped): `--monitors` monitors on a one-minute schedule each check in twice a minute (`in_progress`
 * then `ok`, Sentry's `/cron/` endpoint, GET with the query; the first with its `monitor_config` in a JSON body) for
 * `--minutes` minutes, while `--probes` probes check a local server once a minute. Then every monitor falls silent,
 * and the minute that finds them all missed is timed.
 *
 * Printed: the check-ins' answers p50/p99 per minute with each process' CPU (the two cores are 200%: a minute at
 * 180% or more had no room, and its latency is not judged); how long after its minute began the clock had judged
 * every monitor (the silent minute); the probes' schedule drift (when each check ran, against when it was due);
 * Redis memory and database disk per monitor.
 *
 * Targets: every minute's monitors judged within 10 s; check-ins answered p99 < 50 ms; probe drift p99 < 5 s.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { HOST_CPU, hostUse, hostUseWords, hostWorkMs, NO_ROOM_FROM, openBench, report, round, waitFor, type HostUse } from './lib.ts';

const { values } = parseArgs({ options: { monitors: { type: 'string' }, probes: { type: 'string' }, minutes: { type: 'string' } }, strict: true });
const MONITORS = Number(values.monitors ?? 10_000);
const PROBES = Number(values.probes ?? 500);
const MINUTES = Number(values.minutes ?? 3);
const MINUTE = 60_000;
const progress = (line: string) => process.stderr.write(`bench:monitors: ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? null : round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!, 1);
};

const env = await openBench({ seconds: 0, concurrency: 1, workers: 1, workerConcurrency: 4 }, { PROBE_ALLOW_PRIVATE: 'true' });
const { runtime, stack, project } = env;
const api = new URL(stack.apiUrl);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One check-in; its status and how long it took (ms). */
function checkIn(slug: string, status: string, first: boolean): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const base = `/api/${project.id}/cron/${slug}/${project.public_key}/`;
  const body = first ? JSON.stringify({ status, monitor_config: { schedule: { type: 'crontab', value: '* * * * *' }, checkin_margin: 1, max_runtime: 5 } }) : undefined;
  return new Promise((resolve) => {
    const req = http.request(
      { host: api.hostname, port: api.port, agent, method: first ? 'POST' : 'GET', path: first ? base : `${base}?status=${status}`, headers: first ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body!) } : {} },
      (res) => res.resume().on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started })),
    );
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    req.end(body);
  });
}

/** Sends `calls` spread evenly over `ms`, at most 64 at once; the answers. */
async function spread<T>(calls: (() => Promise<T>)[], ms: number): Promise<T[]> {
  const out: T[] = [];
  const started = performance.now();
  const inFlight = new Set<Promise<void>>();
  for (const [i, call] of calls.entries()) {
    const at = started + (i / calls.length) * ms;
    const wait = at - performance.now();
    if (wait > 0) await sleep(wait);
    while (inFlight.size >= 64) await Promise.race(inFlight);
    const p: Promise<void> = call().then((r) => void out.push(r));
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  }
  await Promise.all(inFlight);
  return out;
}

const target = http.createServer((req, res) => res.end('ok'));
await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/health`;
const dirSize = (dir: string): number =>
  fs.readdirSync(dir, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? dirSize(path.join(dir, e.name)) : fs.statSync(path.join(dir, e.name)).size), 0);
const redisMemory = async () => Number(/used_memory:(\d+)/.exec(await runtime.issuesState.redis.info('memory'))![1]);
const clockKey = `${runtime.config.queuePrefix.replace(/[{}]/g, '')}:monitors:clock`;

interface Minute extends HostUse {
  minute: number;
  sent: number;
  refused: number;
  p50_ms: number | null;
  p99_ms: number | null;
}

try {
  const hostWork = hostWorkMs();
  const [memoryBefore, diskBefore] = [await redisMemory(), dirSize(stack.dataDirs.ferretdb)];
  const slugs = Array.from({ length: MONITORS }, (_, i) => `job-${i}`);
  // the probes, each first due now: the worker checks them once a minute from here on
  const probesAdded = Date.now();
  for (let i = 0; i < PROBES; i++) await runtime.probes.add(Number(project.id), { url: `${targetUrl}?p=${i}`, interval_min: 1 }, new Date(probesAdded));
  progress(`${PROBES} probes added; ${MONITORS} monitors check in twice a minute for ${MINUTES} minutes`);

  const minutes: Minute[] = [];
  for (let m = 0; m < MINUTES; m++) {
    const use = hostUse(stack);
    const started = performance.now();
    // each monitor's run: in_progress in the first half of the minute, ok in the second
    const begun = await spread(slugs.map((slug) => () => checkIn(slug, 'in_progress', m === 0)), 25_000);
    const ended = await spread(slugs.map((slug) => () => checkIn(slug, 'ok', false)), 25_000);
    const answers = [...begun, ...ended];
    const ms = answers.map((a) => a.ms);
    const row: Minute = { minute: m + 1, sent: answers.length, refused: answers.filter((a) => a.status !== 202).length, p50_ms: pct(ms, 50), p99_ms: pct(ms, 99), ...use() };
    minutes.push(row);
    progress(`minute ${row.minute}: ${row.sent} check-ins, ${row.refused} not 202, p50 ${row.p50_ms} / p99 ${row.p99_ms} ms; ${hostUseWords(row)}`);
    const left = MINUTE - (performance.now() - started);
    if (left > 0) await sleep(left);
  }

  // silence: every monitor's next run is missed at the minute after its margin; time how long that minute takes
  progress('every monitor falls silent; waiting for the minute that finds them missed');
  const lastCheckIn = Date.now();
  const missedMinute = lastCheckIn - (lastCheckIn % MINUTE) + 2 * MINUTE;
  await sleep(Math.max(0, missedMinute - Date.now()));
  const judgedAfter = await waitFor(async () => Number(await runtime.issuesState.redis.get(clockKey)) >= missedMinute, 5 * MINUTE);
  const sample = await runtime.monitorsState.read({ project: Number(project.id), slug: slugs[MONITORS - 1]!, environment: 'production' });

  // probes: when each check ran against when it was due
  const drift: number[] = [];
  for (let i = 1; i <= PROBES; i++) for (const r of await runtime.stores.probes.results(Number(project.id), i, probesAdded - MINUTE)) drift.push(r.at - r.due);
  const [memoryAfter, diskAfter] = [await redisMemory(), dirSize(stack.dataDirs.ferretdb)];
  const perMonitor = { redis_bytes: Math.round((memoryAfter - memoryBefore) / (MONITORS + PROBES)), disk_bytes: Math.round((diskAfter - diskBefore) / (MONITORS + PROBES)) };
  const judged = minutes.every((m) => m.room);
  const targets = {
    every_monitor_judged_within_10_s: judgedAfter !== null && judgedAfter <= 10,
    check_ins_p99_under_50_ms: minutes.every((m) => (m.p99_ms ?? Infinity) < 50),
    probe_drift_p99_under_5_s: (pct(drift, 99) ?? Infinity) < 5000,
    none_refused: minutes.every((m) => m.refused === 0),
  };
  report(
    'bench:monitors',
    { monitors: MONITORS, probes: PROBES, minutes, host_work_ms: hostWork, judged_after_s: judgedAfter, sample_state: sample.status, probe_checks: drift.length, probe_drift_ms: { p50: pct(drift, 50), p99: pct(drift, 99) }, per_monitor: perMonitor, targets, latency_judged: judged },
    [
      ['host', `work baseline ${hostWork} ms; the two cores are ${HOST_CPU}%, a minute at ${NO_ROOM_FROM}% or more had no room`],
      ...minutes.map((m): [string, string] => [`minute ${m.minute}`, `${m.sent} check-ins (${m.refused} not 202), p50 ${m.p50_ms} / p99 ${m.p99_ms} ms; ${hostUseWords(m)}`]),
      ['the silent minute judged after', `${judgedAfter ?? '> 300'} s (every monitor missed: the last one is ${sample.status})`],
      ['probe drift', `${drift.length} checks, p50 ${pct(drift, 50)} / p99 ${pct(drift, 99)} ms`],
      ['per monitor or probe', `Redis ${perMonitor.redis_bytes} bytes, database disk ${perMonitor.disk_bytes} bytes`],
      ...Object.entries(targets).map(([k, v]): [string, string] => [k, String(v)]),
      ['latency judged (room in every minute)', String(judged)],
    ],
  );
} finally {
  agent.destroy();
  target.close();
  await env.close();
}
