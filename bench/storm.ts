/**
 * npm run bench:storm -- [--calm-rate 100] [--base-rate 500] [--storm-rate 6000] [--phases 10,20,10] [--warmup 5] [--baseline 10] [--calibrate-step 250]
 *
 * An error storm (issue 51), open loop (requests leave on a timetable, whatever the answers do) against a stack
 * of its own (one API, one worker process, defaults as shipped): a storming project sends `--base-rate` error
 * events a second, then `--storm-rate` for the second phase, then `--base-rate` again, while a calm project
 * sends `--calm-rate` throughout. Half of each are native events (`POST /api/v1/events`, the secret key), half
 * Sentry envelopes (`POST /api/<project>/envelope/`, the DSN's key); about 3.5 KB each. A client gives up on a
 * request after 10 s, as SDKs do. The requests come from tools/loadgen (Go, bench/loadgen.ts), a process of its own
 * for each run of phases (the calibration's connections are not the storm's), its CPU printed as the load
 * generator's. Before the phases, `--warmup` seconds at a fifth of the base rates, not measured
 * (a new process compiles its code and opens its connections first).
 *
 * Printed per phase: accepted (2xx) and refused (429/503) requests with their p50/p99, per project; `/healthz`'s
 * longest silence (polled every 100 ms); the API's largest RSS; each process' CPU and the host's CPU stolen, as
 * bench:growth prints them (the two cores are 200%: a phase that used 180% or more had no room, and its
 * latencies are not judged). Then whether the accepted latency came back within 5 s of the storm's end, and
 * whether every 2xx was stored and counted exactly once.
 *
 * After the warm-up, the calibration (`--calibrate-step`, 0: none): the storming project alone at rates rising by
 * that step, 5 s each, until one is refused anything or answered at p99 ≥ 250 ms; the highest rate before it is the
 * stack's sustained capacity in this run, and the storm must take at least 80% of it a second (issue 66) while the
 * calm project is never refused and refusals stay within 3× the bare server's p99.
 *
 * First, the baseline (`--baseline` seconds, 0: none): the storm's rates from the same load generator against a bare
 * Node server in its own process that refuses every request at once, as the admission gate does. Its latency is
 * what Node's HTTP, this host and the load generator cost a refusal before Lookout does anything: the floor under
 * the storm's refusals.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { realisticErrorEvent } from './events.ts';
import { clientUrls } from './front.ts';
import { runLoad } from './loadgen.ts';
import { headLines } from './raw-http.ts';
import { BENCH_INSTANCE, countedOnce, HOST_CPU, hostPercent, hostUse, hostUseWords, hostWorkMs, NO_ROOM_FROM, openBench, refusalsByReason, report, round, settled, startBareServer, type HostUse } from './lib.ts';

const { values } = parseArgs({
  options: {
    'calm-rate': { type: 'string' },
    'base-rate': { type: 'string' },
    'storm-rate': { type: 'string' },
    phases: { type: 'string' },
    warmup: { type: 'string' },
    baseline: { type: 'string' },
    'calibrate-step': { type: 'string' },
  },
  strict: true,
});
const CALM_RATE = Number(values['calm-rate'] ?? 100);
const BASE_RATE = Number(values['base-rate'] ?? 500);
const STORM_RATE = Number(values['storm-rate'] ?? 6000);
const [BEFORE_S, STORM_S, AFTER_S] = (values.phases ?? '10,20,10').split(',').map(Number) as [number, number, number];
const WARMUP_S = Number(values.warmup ?? 5);
const BASELINE_S = Number(values.baseline ?? 10);
const CALIBRATE_STEP = Number(values['calibrate-step'] ?? 250);
const CALIBRATE_S = 5;
const CLIENT_TIMEOUT_MS = 10_000;
const progress = (line: string) => process.stderr.write(`bench:storm: ${line}\n`);

// ADMIT_* and SPIKE_FLOOR_PER_MINUTE in the environment go to the stack, to try other admission limits
const admit = Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(ADMIT_|SPIKE_FLOOR_)/.test(k)) as [string, string][]);
const env = await openBench({ seconds: 0, concurrency: 1, workers: 1, workerConcurrency: 4 }, admit);
const { runtime, stack } = env;

interface Sender {
  name: 'storm' | 'calm';
  project: number;
  /** header lines (bench/raw-http.ts) */
  native: string;
  envelopePath: string;
  envelopeHeaders: string;
}

async function sender(name: 'storm' | 'calm', project: { id: string; secret_key: string; public_key: string }, instance: string): Promise<Sender> {
  const id = Number(project.id);
  if (name === 'calm') await runtime.sdk.activate((await runtime.stores.projects.get(id))!, { instance_id: instance }, new Date());
  return {
    name,
    project: id,
    native: headLines({ 'content-type': 'application/json', 'x-service-key': project.secret_key, 'x-service-instance': instance }),
    envelopePath: `/api/${id}/envelope/`,
    envelopeHeaders: headLines({ 'content-type': 'application/x-sentry-envelope', 'x-sentry-auth': `Sentry sentry_version=7, sentry_key=${project.public_key}, sentry_client=bench/1.0` }),
  };
}

/** One request's fate: when it was due (ms from the start), its phase, sender, status (0: no answer) and latency. */
interface Sent {
  due: number;
  phase: number;
  from: 'storm' | 'calm';
  status: number;
  ms: number;
  /** how long it waited for a connection (NaN: it never had one) */
  connectMs: number;
  /** whether it opened a new connection (which waits in the API's accept queue) */
  fresh: boolean;
  /** a refusal's reason as the client reads it (the gate's are in /metrics; a quota's only here), or why there was no answer */
  reason: string;
}

const refusal = (status: number) => status === 429 || status === 503;
/** requests that got no answer, by reason */
function noAnswer(sent: Sent[]): Record<string, number> {
  const all: Record<string, number> = {};
  for (const r of sent) if (r.status === 0) all[r.reason] = (all[r.reason] ?? 0) + 1;
  return all;
}
/** refusals by status and reason */
function reasonsOf(sent: Sent[]): Record<string, number> {
  const all: Record<string, number> = {};
  for (const r of sent) {
    const key = `${r.status} ${r.reason}`;
    if (refusal(r.status)) all[key] = (all[key] ?? 0) + 1;
  }
  return all;
}

/**
 * Each sender's 50 kinds of issue: each kind's JSON is made once, and the load generator gives it a fresh event_id
 * per request (stringifying 6,000 events a second would take much of a core the stack needs).
 */
const ID = '00000000000000000000000000000000';
const made = new Map<string, string[]>();
function templates(release: string): string[] {
  let t = made.get(release);
  if (!t) {
    t = Array.from({ length: 50 }, (_, k) => JSON.stringify({ ...realisticErrorEvent(k, { at: new Date(), release: `${release}@1`, environment: 'production', company: 'bench' }), event_id: ID }));
    made.set(release, t);
  }
  return t;
}

/** event_ids handed out so far: each run of the load generator starts past them */
let seq = 0;
/**
 * The phases one after another, each sender at its rate, from tools/loadgen (bench/loadgen.ts); latency from when a
 * request was due (no coordinated omission). Each sender is its own client (the calm project is another application,
 * on other machines): no connection is shared between them, and each holds at most 2,048 (more overflowed the API's
 * listen queue of 4,096 while accepted requests held theirs, and the kernel's dropped handshakes left requests
 * unanswered for 10 s). Beside each request, per phase, how late the generator handed requests to a connection past
 * their due time (p99): the floor under every latency measured in the phase. `onPhase` gets the generator's pid, to
 * count its CPU.
 */
async function drive(url: string, senders: Sender[], phases: { seconds: number; rates: Record<string, number> }[], onPhase: (n: number, generator: number) => void): Promise<{ sent: Sent[]; ownDelayP99Ms: number[] }> {
  const plan = {
    url,
    max_sockets: 2048,
    timeout_ms: CLIENT_TIMEOUT_MS,
    seq_start: seq,
    senders: senders.map((s) => ({ native_head: s.native, envelope_path: s.envelopePath, envelope_head: s.envelopeHeaders, templates: templates(s.name) })),
    phases: phases.map((p) => ({ seconds: p.seconds, rates: senders.map((s) => p.rates[s.name]!) })),
  };
  const { records, lateP99Ms } = await runLoad(plan, onPhase);
  seq += records.length;
  return { sent: records.map((r) => ({ ...r, from: senders[r.from]!.name })), ownDelayP99Ms: lateP99Ms };
}
/** The stack's processes and the load generator's, for `hostUse`. */
const withGenerator = (pid: number) => ({ processes: () => [...stack.processes(), { role: 'load generator', pid }] });

/** `/healthz` every 100 ms: the longest time without an answer. */
function watchHealth() {
  let last = performance.now();
  let longest = 0;
  let stop = false;
  const loop = async () => {
    while (!stop) {
      const ok = await fetch(`${stack.apiUrl}/healthz`, { signal: AbortSignal.timeout(5000) }).then((r) => r.ok, () => false);
      const now = performance.now();
      if (ok) {
        longest = Math.max(longest, now - last);
        last = now;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    longest = Math.max(longest, performance.now() - last);
  };
  const running = loop();
  return async () => {
    stop = true;
    await running;
    return round(longest, 0);
  };
}

/** The API process' largest resident set (MB), sampled every 250 ms; an API that died is sampled no more. */
function watchRss(pid: number) {
  let max = 0;
  const timer = setInterval(() => {
    let status: string;
    try {
      status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    } catch {
      // gone: an exception in this timer would end the benchmark without stopping its stack
      return clearInterval(timer);
    }
    const m = /VmRSS:\s+(\d+)/.exec(status);
    if (m) max = Math.max(max, Number(m[1]) / 1024);
  }, 250);
  return () => {
    clearInterval(timer);
    return round(max, 0);
  };
}

/**
 * The API's accept queue (connections the kernel completed and the process has not accepted yet: the listening
 * socket's Recv-Q), its largest each second since `start`, read with `ss`, which dumps only listening sockets
 * (/proc/net/tcp lists every connection, thousands in a storm), four times a second: each `ss` costs about 12 ms of
 * CPU, counted in the host's busy time and no process' (at ten a second it was an eighth of a core). Node 20's
 * libuv accepts one connection per turn of the event loop, so a busy API takes new connections slowly.
 */
function watchAcceptQueue(port: number, start: number) {
  const largest = new Map<number, number>();
  let reading = false;
  const timer = setInterval(() => {
    if (reading) return;
    reading = true;
    execFile('ss', ['-ltnH', `sport = :${port}`], (err, out) => {
      reading = false;
      if (err) return clearInterval(timer); // no ss here: the queue is not shown
      const queued = Math.max(0, ...out.split('\n').map((line) => Number(line.trim().split(/\s+/)[1]) || 0));
      const second = Math.floor((performance.now() - start) / 1000);
      largest.set(second, Math.max(largest.get(second) ?? 0, queued));
    });
  }, 250);
  return { largest, stop: () => clearInterval(timer) };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? null : round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!, 1);
};
const ok = (r: Sent) => r.status >= 200 && r.status < 300;
const refused = (r: Sent) => r.status === 429 || r.status === 503;
function figures(rs: Sent[]) {
  const accepted = rs.filter(ok).map((r) => r.ms);
  const no = rs.filter(refused).map((r) => r.ms);
  const statuses: Record<string, number> = {};
  for (const r of rs) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  return { sent: rs.length, accepted: accepted.length, accepted_p50_ms: pct(accepted, 50), accepted_p99_ms: pct(accepted, 99), refused: no.length, refused_p99_ms: pct(no, 99), statuses };
}

/** The baseline: one second at the base rates, then the storm's against a bare server refusing everything. */
async function floorRun(senders: Sender[]) {
  progress(`baseline: a bare Node server refusing every request, ${BASELINE_S} s at storm ${STORM_RATE}/s, calm ${CALM_RATE}/s`);
  const bare = await startBareServer('refuse');
  const cpu: { measure?: () => HostUse; host?: HostUse } = {};
  try {
    const phases = [
      { seconds: 1, rates: { storm: BASE_RATE, calm: CALM_RATE } },
      { seconds: BASELINE_S, rates: { storm: STORM_RATE, calm: CALM_RATE } },
    ];
    const { sent, ownDelayP99Ms } = await drive(bare.url, senders, phases, (n, generator) => {
      if (n === 1) cpu.measure = hostUse({ processes: () => [...withGenerator(generator).processes(), { role: 'bare server', pid: bare.pid }] });
      // at the end of sending, while the generator is still there to be read
      if (n === 2) cpu.host = cpu.measure!();
    });
    const host = cpu.host!;
    const answered = sent.filter((r) => r.phase === 1 && refused(r)).map((r) => r.ms);
    return {
      sent: sent.filter((r) => r.phase === 1).length,
      refused: answered.length,
      refused_p50_ms: pct(answered, 50),
      refused_p99_ms: pct(answered, 99),
      over_20_ms: answered.filter((ms) => ms > 20).length,
      no_answer: noAnswer(sent),
      ...host,
      load_generator_delay_p99_ms: ownDelayP99Ms[1]!,
    };
  } finally {
    await bare.stop();
  }
}

/**
 * The stack's sustained capacity in this run: the storming project alone at rates rising by CALIBRATE_STEP, 5 s
 * each after a short warm-up, until one is refused anything or answered at p99 ≥ 250 ms; the highest rate before.
 */
async function calibrate(url: string, stormer: Sender) {
  progress(`calibration: the storming project alone, ${CALIBRATE_STEP}/s more each ${CALIBRATE_S} s, until a refusal or p99 ≥ 250 ms`);
  await drive(url, [stormer], [{ seconds: WARMUP_S, rates: { storm: BASE_RATE / 5 } }], () => {});
  const steps: { rate: number; accepted: number; refused: number; p99_ms: number | null; room: boolean; cpu_percent: number; api_cpu_percent: number }[] = [];
  for (let rate = CALIBRATE_STEP; ; rate += CALIBRATE_STEP) {
    await new Promise((r) => setTimeout(r, 3000)); // what the last step left is processed
    const host: { use?: () => HostUse; used?: HostUse } = {};
    const { sent } = await drive(url, [stormer], [{ seconds: CALIBRATE_S, rates: { storm: rate } }], (n, generator) => {
      if (n === 0) host.use = hostUse(withGenerator(generator));
      else host.used = host.use!();
    });
    const f = figures(sent);
    const used = host.used!;
    steps.push({ rate, accepted: f.accepted, refused: f.sent - f.accepted, p99_ms: f.accepted_p99_ms, room: used.room, cpu_percent: hostPercent(used), api_cpu_percent: used.cpu_percent.api ?? 0 });
    progress(`calibration: ${rate}/s: ${f.accepted} of ${f.sent} taken, p99 ${f.accepted_p99_ms} ms; ${hostUseWords(used)}`);
    if (f.accepted < f.sent || (f.accepted_p99_ms ?? Infinity) >= 250 || rate >= STORM_RATE) break;
  }
  const held = steps.filter((st) => st.refused === 0 && (st.p99_ms ?? Infinity) < 250);
  return { capacity_per_s: held.at(-1)?.rate ?? 0, steps };
}

try {
  const hostWork = hostWorkMs();
  const storm = await sender('storm', env.project, BENCH_INSTANCE);
  const created = await runtime.admin.createProject({ org: Number((await runtime.admin.listOrgs())[0]!.id), name: 'calm', securityMonitoring: true });
  const calm = await sender('calm', created, 'bench-instance-calm');
  const floor = BASELINE_S > 0 ? await floorRun([storm, calm]) : null;
  const api = (await clientUrls(stack))[0]!;
  const calibration = CALIBRATE_STEP > 0 ? await calibrate(api, storm) : null;
  const phases = [
    { seconds: WARMUP_S, rates: { storm: BASE_RATE / 5, calm: CALM_RATE / 5 } },
    { seconds: BEFORE_S, rates: { storm: BASE_RATE, calm: CALM_RATE } },
    { seconds: STORM_S, rates: { storm: STORM_RATE, calm: CALM_RATE } },
    { seconds: AFTER_S, rates: { storm: BASE_RATE, calm: CALM_RATE } },
  ];
  const cpu: HostUse[] = [];
  let measure: (() => HostUse) | null = null;
  const onPhase = (n: number, generator: number) => {
    if (measure) cpu.push(measure());
    if (n < phases.length) {
      progress(`${n === 0 ? 'warm-up' : `phase ${n}`}: storm ${phases[n]!.rates.storm}/s, calm ${phases[n]!.rates.calm}/s for ${phases[n]!.seconds} s`);
      measure = hostUse(withGenerator(generator));
    }
  };
  const healthSilence = watchHealth();
  const apiPid = stack.processes().find((p) => p.role === 'api')!.pid;
  const rss = watchRss(apiPid);
  const acceptQueue = watchAcceptQueue(Number(new URL(stack.apiUrl).port), performance.now());
  const { sent, ownDelayP99Ms: ownDelay } = await drive(api, [storm, calm], phases, onPhase);
  acceptQueue.stop();
  const [silence, rssMb] = [await healthSilence(), rss()];

  progress(`load over; no answer: ${JSON.stringify(noAnswer(sent))}; refusals as the clients read them: ${JSON.stringify(reasonsOf(sent.filter((r) => r.from === 'storm')))}; waiting for every accepted event to be applied`);
  const refusedBy = await refusalsByReason(stack.apiUrl);
  const settle = await settled(runtime);
  const exact = [];
  for (const s of [storm, calm]) {
    const acknowledged = sent.filter((r) => r.from === s.name && ok(r)).length;
    exact.push({ project: s.name, ...(await countedOnce(runtime, s.project, acknowledged, progress)) });
  }

  const stormEnd = (WARMUP_S + BEFORE_S + STORM_S) * 1000;
  const perPhase = phases.slice(1).map((_, m) => {
    const n = m + 1; // phase 0 is the warm-up
    const rs = sent.filter((r) => r.phase === n);
    return {
      phase: n,
      all: figures(rs),
      storm: figures(rs.filter((r) => r.from === 'storm')),
      calm: figures(rs.filter((r) => r.from === 'calm')),
      ...cpu[n]!,
      load_generator_delay_p99_ms: ownDelay[n]!,
    };
  });
  const recovered = figures(sent.filter((r) => r.due >= stormEnd + 5000));
  // second by second, to see when latency rose and fell (stderr, beside the progress lines)
  const seconds = WARMUP_S + BEFORE_S + STORM_S + AFTER_S;
  for (let t = WARMUP_S; t < seconds; t++) {
    const rs = sent.filter((r) => r.due >= t * 1000 && r.due < (t + 1) * 1000);
    const [f, c] = [figures(rs), figures(rs.filter((r) => r.from === 'calm'))];
    const waited = pct(rs.filter(refused).map((r) => r.connectMs), 99);
    progress(
      `second ${t}: ${f.sent} sent, ${f.accepted} accepted p50 ${f.accepted_p50_ms} p99 ${f.accepted_p99_ms} ms, ${f.refused} refused p99 ${f.refused_p99_ms} ms (of it waiting for a connection p99 ${waited} ms), ${f.sent - f.accepted - f.refused} unanswered; calm: ${c.refused} refused, p99 ${c.accepted_p99_ms} ms; accept queue up to ${acceptQueue.largest.get(t) ?? 0}`,
    );
  }
  // where the storm's slow refusals were: its first second (the onset), or the rest
  const stormStart = (WARMUP_S + BEFORE_S) * 1000;
  const slowRefusals = sent.filter((r) => r.phase === 2 && refused(r) && r.ms > 20);
  const slow = { over_20_ms: slowRefusals.length, in_first_second: slowRefusals.filter((r) => r.due < stormStart + 1000).length };
  // the storm's refusals on connections the API had accepted before, and on new ones (which wait to be accepted)
  const stormRefusals = sent.filter((r) => r.phase === 2 && refused(r));
  const refusalsOn = (fresh: boolean) => {
    const ms = stormRefusals.filter((r) => r.fresh === fresh).map((r) => r.ms);
    return { refused: ms.length, p99_ms: pct(ms, 99) };
  };
  const byConnection = { open: refusalsOn(false), new: refusalsOn(true) };
  const acceptQueueMax = Math.max(0, ...acceptQueue.largest.values());
  const first = perPhase[0]!.all.accepted_p99_ms ?? 0;
  const stormPhase = perPhase[1]!;
  const takenPerS = round(stormPhase.all.accepted / STORM_S, 0);
  const targets = {
    storm_refused_before_bodies: stormPhase.storm.refused > 0,
    // no step held: the capacity is under the first step and unknown, so no share of it can be judged
    takes_80_percent_of_capacity: calibration === null || calibration.capacity_per_s === 0 ? null : takenPerS >= 0.8 * calibration.capacity_per_s,
    calm_never_refused: perPhase.every((p) => p.calm.accepted === p.calm.sent),
    refusals_p99_within_3x_floor: floor === null ? null : perPhase.every((p) => p.all.refused === 0 || (p.all.refused_p99_ms ?? Infinity) <= 3 * (floor.refused_p99_ms ?? 0)),
    healthz_never_silent_over_500_ms: silence <= 500,
    api_rss_under_400_mb: rssMb < 400,
    recovered_within_5_s: (recovered.accepted_p99_ms ?? Infinity) <= 1.5 * first,
    every_2xx_counted_once: exact.every((e) => e.exact),
  };
  const judged = perPhase.every((p) => p.room);
  const line = (f: ReturnType<typeof figures>) =>
    `${f.sent} sent, ${f.accepted} accepted p50 ${f.accepted_p50_ms} / p99 ${f.accepted_p99_ms} ms, ${f.refused} refused p99 ${f.refused_p99_ms} ms, statuses ${JSON.stringify(f.statuses)}`;
  report(
    'bench:storm',
    { rates: { calm: CALM_RATE, base: BASE_RATE, storm: STORM_RATE }, phases_s: [BEFORE_S, STORM_S, AFTER_S], host_work_ms: hostWork, calibration, storm_taken_per_s: takenPerS, phases: perPhase, refused_by: refusedBy, storm_refusals_slower_than_20_ms: slow, storm_refusals_by_connection: byConnection, api_accept_queue_max: acceptQueueMax, healthz_longest_silence_ms: silence, api_rss_max_mb: rssMb, no_answer: noAnswer(sent), baseline_bare_refusals: floor, recovered_after_5_s: recovered, settled_s: settle, exact, targets, latency_judged: judged },
    [
      ['host', `work baseline ${hostWork} ms; the two cores are ${HOST_CPU}%, a phase at ${NO_ROOM_FROM}% or more had no room`],
      ...(floor
        ? [
            [
              'baseline: bare server refusing',
              `${floor.refused} of ${floor.sent} refused p50 ${floor.refused_p50_ms} / p99 ${floor.refused_p99_ms} ms, ${floor.over_20_ms} over 20 ms; ${hostUseWords(floor)}; the load generator sent late by p99 ${floor.load_generator_delay_p99_ms} ms`,
            ] as [string, string],
          ]
        : []),
      ...perPhase.flatMap((p): [string, string][] => [
        [`phase ${p.phase}: storming project`, line(p.storm)],
        [`phase ${p.phase}: calm project`, line(p.calm)],
        [`phase ${p.phase}: host`, `${hostUseWords(p)}; the load generator sent late by p99 ${p.load_generator_delay_p99_ms} ms`],
      ]),
      ...(calibration
        ? [['capacity (calibration)', `${calibration.capacity_per_s}/s taken with no refusal at p99 < 250 ms (${calibration.steps.map((st) => `${st.rate}/s: p99 ${st.p99_ms} ms, ${st.refused} refused, CPU ${st.cpu_percent}% (api ${st.api_cpu_percent})`).join('; ')})`] as [string, string]]
        : []),
      ['taken a second in the storm', `${takenPerS}/s${calibration?.capacity_per_s ? ` (${round((100 * takenPerS) / calibration.capacity_per_s, 0)}% of capacity; target ≥ 80%)` : calibration ? ' (no calibration step held: the capacity is unknown, the share not judged)' : ''}`],
      ['storm refusals over 20 ms', `${slow.over_20_ms} (1% of them is ${Math.round(perPhase[1]!.all.refused / 100)}), ${slow.in_first_second} in its first second`],
      ['storm refusals by connection', `on connections already open: ${byConnection.open.refused}, p99 ${byConnection.open.p99_ms} ms; on new connections: ${byConnection.new.refused}, p99 ${byConnection.new.p99_ms} ms (the API's accept queue held up to ${acceptQueueMax})`],
      ['refused, by route and reason', Object.entries(refusedBy).map(([k, n]) => `${k} ${n}`).join(', ')],
      ['accepted from 5 s after the storm', `p99 ${recovered.accepted_p99_ms} ms (first phase ${first} ms)`],
      ['/healthz longest silence', `${silence} ms`],
      ['API RSS, largest', `${rssMb} MB`],
      ['every 2xx stored and counted once', exact.map((e) => `${e.project}: ${e.acknowledged} acknowledged, ${e.stored} stored, ${e.counted_in_issues} counted`).join('; ')],
      ...Object.entries(targets).map(([k, v]): [string, string] => [k, String(v)]),
    ],
  );
} finally {
  await env.close();
}
