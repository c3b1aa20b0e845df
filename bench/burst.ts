/**
 * npm run bench:burst -- [--sizes 120,1000,2000] [--rounds 3] [--quiet 10] [--idle 10] [--attempts 200]
 *
 * Bursts an idle Lookout must take whole (issue 66), against a stack of its own (one API, one worker process,
 * defaults as shipped, no warm-up): after `--idle` seconds of nothing, each size of `--sizes` error events sent at
 * once, one connection per request as SDKs open them (half native `POST /api/v1/events` with the secret key, half
 * Sentry envelopes with the DSN's key; about 3.5 KB each), each burst followed by `--quiet` seconds of nothing, the
 * whole `--rounds` times; then `--attempts` failed sign-ins of one actor from one address sent at once.
 *
 * Printed per burst: answers by status, refusals, the answers' p50/p99 (from when the burst was sent) and each
 * process' CPU while it was answered (the two cores are 200%: a burst at 180% or more had no room, and its latency
 * is not judged). Then whether every 2xx was stored and counted exactly once, and how long the sign-in burst took
 * to be raised as a security issue.
 *
 * Targets: no burst refused; p99 < 500 ms for 120, < 3 s for 2,000; every 2xx counted once; the sign-in burst
 * raised within 5 s, none of its attempts refused.
 */
import http from 'node:http';
import { parseArgs } from 'node:util';
import { realisticErrorEvent } from './events.ts';
import { clientUrls } from './front.ts';
import { BENCH_INSTANCE, countedOnce, HOST_CPU, hostUse, hostUseWords, hostWorkMs, NO_ROOM_FROM, openBench, refusalsByReason, report, round, settled, waitFor, type HostUse } from './lib.ts';

const { values } = parseArgs({
  options: { sizes: { type: 'string' }, rounds: { type: 'string' }, quiet: { type: 'string' }, idle: { type: 'string' }, attempts: { type: 'string' } },
  strict: true,
});
const SIZES = (values.sizes ?? '120,1000,2000').split(',').map(Number);
const ROUNDS = Number(values.rounds ?? 3);
const QUIET_S = Number(values.quiet ?? 10);
const IDLE_S = Number(values.idle ?? 10);
const ATTEMPTS = Number(values.attempts ?? 200);
const CLIENT_TIMEOUT_MS = 30_000;
const TARGET_P99_MS: Record<number, number> = { 120: 500, 2000: 3000 };
const progress = (line: string) => process.stderr.write(`bench:burst: ${line}\n`);

const env = await openBench({ seconds: 0, concurrency: 1, workers: 1, workerConcurrency: 4 });
const { runtime, stack, project } = env;
const api = new URL((await clientUrls(stack))[0]!);
const native = { 'content-type': 'application/json', 'x-service-key': project.secret_key, 'x-service-instance': BENCH_INSTANCE };
const envelopeHeaders = { 'content-type': 'application/x-sentry-envelope', 'x-sentry-auth': `Sentry sentry_version=7, sentry_key=${project.public_key}, sentry_client=bench/1.0` };

/** One request on a connection of its own; its status (0: no answer) and how long from `since` (ms). */
function post(path: string, headers: Record<string, string>, body: string, since: number): Promise<{ status: number; ms: number }> {
  return new Promise((resolve) => {
    const done = (status: number) => resolve({ status, ms: performance.now() - since });
    const req = http.request(
      { host: api.hostname, port: api.port, path, method: 'POST', agent: false, headers: { ...headers, 'content-length': Buffer.byteLength(body) }, timeout: CLIENT_TIMEOUT_MS },
      (res) => res.resume().on('end', () => done(res.statusCode ?? 0)),
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => done(0));
    req.end(body);
  });
}

const templates = Array.from({ length: 50 }, (_, k) => realisticErrorEvent(k, { at: new Date(), release: 'burst@1', environment: 'production', company: 'bench' }));
let seq = 0;
/** The i-th request of a burst: a native event (even) or an envelope with one event (odd). */
function request(i: number): [string, Record<string, string>, string] {
  const event_id = (++seq).toString(16).padStart(32, '0');
  const payload = JSON.stringify({ ...templates[i % 50]!, event_id, timestamp: new Date().toISOString() });
  if (i % 2 === 0) return ['/api/v1/events', native, payload];
  return [`/api/${project.id}/envelope/`, envelopeHeaders, `{"event_id":"${event_id}"}\n{"type":"event","length":${Buffer.byteLength(payload)}}\n${payload}\n`];
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? null : round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!, 1);
};
const sleep = (s: number) => new Promise((r) => setTimeout(r, s * 1000));

interface Burst extends HostUse {
  round: number;
  size: number;
  statuses: Record<string, number>;
  accepted: number;
  refused: number;
  p50_ms: number | null;
  p99_ms: number | null;
  target_p99_ms: number | null;
}

/** `size` requests made first, then all sent at once. */
async function burst(roundNo: number, size: number, make: (i: number) => [string, Record<string, string>, string]): Promise<Burst> {
  const requests = Array.from({ length: size }, (_, i) => make(i));
  const use = hostUse(stack);
  const since = performance.now();
  const answers = await Promise.all(requests.map(([path, headers, body]) => post(path, headers, body, since)));
  const statuses: Record<string, number> = {};
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  const ms = answers.map((a) => a.ms);
  const accepted = answers.filter((a) => a.status >= 200 && a.status < 300).length;
  return { round: roundNo, size, statuses, accepted, refused: answers.filter((a) => a.status === 429 || a.status === 503).length, p50_ms: pct(ms, 50), p99_ms: pct(ms, 99), target_p99_ms: TARGET_P99_MS[size] ?? null, ...use() };
}

try {
  const hostWork = hostWorkMs();
  progress(`idle for ${IDLE_S} s`);
  await sleep(IDLE_S);
  const bursts: Burst[] = [];
  for (let r = 1; r <= ROUNDS; r++) {
    for (const size of SIZES) {
      const b = await burst(r, size, request);
      bursts.push(b);
      progress(`round ${r}, ${size} at once: ${JSON.stringify(b.statuses)}, p50 ${b.p50_ms} / p99 ${b.p99_ms} ms; ${hostUseWords(b)}`);
      await sleep(QUIET_S);
    }
  }

  // failed sign-ins of one actor from one address, all at once: a burst over the project's threshold
  const ip = '198.51.100.77';
  const attempt = () => JSON.stringify({ event_id: (++seq).toString(16).padStart(32, '0'), timestamp: new Date().toISOString(), security: { kind: 'login_failed', actor: 'burst-actor', ip, outcome: 'wrong password' } });
  const securityIssue = async () => {
    const res = await fetch(`${stack.apiUrl}/api/v1/issues?kind=security`, { headers: { 'x-service-key': project.secret_key, 'x-service-instance': BENCH_INSTANCE } });
    const { issues } = (await res.json()) as { issues: { title: string }[] };
    return issues.some((i) => i.title.includes(ip));
  };
  const sentAt = performance.now();
  const signIns = await burst(0, ATTEMPTS, () => ['/api/v1/events', native, attempt()]);
  const raisedAfter = (await waitFor(securityIssue, 30_000)) === null ? null : round((performance.now() - sentAt) / 1000, 2);
  progress(`${ATTEMPTS} sign-in attempts at once: ${JSON.stringify(signIns.statuses)}; raised after ${raisedAfter ?? 'more than 30'} s`);

  const refusedBy = await refusalsByReason(stack.apiUrl);
  progress('waiting for every accepted event to be applied');
  const settle = await settled(runtime);
  const exact = await countedOnce(runtime, Number(project.id), bursts.reduce((n, b) => n + b.accepted, 0), progress);

  const targets = {
    no_burst_refused: bursts.every((b) => b.accepted === b.size),
    p99_within_targets: bursts.every((b) => b.target_p99_ms === null || (b.p99_ms ?? Infinity) < b.target_p99_ms),
    every_2xx_counted_once: exact.exact,
    sign_ins_all_taken: signIns.accepted === ATTEMPTS,
    sign_in_burst_raised_within_5_s: raisedAfter !== null && raisedAfter <= 5,
  };
  const judged = bursts.every((b) => b.room);
  report(
    'bench:burst',
    { sizes: SIZES, rounds: ROUNDS, quiet_s: QUIET_S, host_work_ms: hostWork, bursts, sign_ins: { ...signIns, raised_after_s: raisedAfter }, refused_by: refusedBy, settled_s: settle, exact, targets, latency_judged: judged },
    [
      ['host', `work baseline ${hostWork} ms; the two cores are ${HOST_CPU}%, a burst at ${NO_ROOM_FROM}% or more had no room`],
      ...bursts.map((b): [string, string] => [
        `round ${b.round}: ${b.size} at once`,
        `${b.accepted} taken, ${b.refused} refused, ${JSON.stringify(b.statuses)}; p50 ${b.p50_ms} / p99 ${b.p99_ms} ms${b.target_p99_ms ? ` (target < ${b.target_p99_ms})` : ''}; ${hostUseWords(b)}`,
      ]),
      [`${ATTEMPTS} sign-in attempts at once`, `${signIns.accepted} taken, ${signIns.refused} refused; p99 ${signIns.p99_ms} ms; burst raised after ${raisedAfter ?? '> 30'} s`],
      ['refused, by route and reason', Object.entries(refusedBy).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'],
      ['every 2xx stored and counted once', `${exact.acknowledged} acknowledged, ${exact.stored} stored, ${exact.counted_in_issues} counted`],
      ...Object.entries(targets).map(([k, v]): [string, string] => [k, String(v)]),
      ['latency judged (room in every burst)', String(judged)],
    ],
  );
} finally {
  await env.close();
}
