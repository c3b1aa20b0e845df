/**
 * The load the benchmarks drive: fixed offered rates over HTTP (open loop:
 * requests leave on a timetable, whatever the answers do), and the streams of
 * sessions and events they send. Requests go through the lean client of
 * bench/raw-http.ts: the generator shares the host's two cores with the stack.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { realisticErrorEvent } from './events.ts';
import { browserEvent, type BrowserBundle } from './sourcemaps.ts';
import { round } from './lib.ts';
import { headLines, rawPool } from './raw-http.ts';

export interface Stream {
  name: string;
  path: string;
  /** requests per second */
  rate: number;
  body: (i: number) => string;
  /** told of each answer: the request's number and status */
  answered?: (i: number, status: number) => void;
}

export interface Latencies {
  sent: number;
  answered: number;
  non_2xx: number;
  p50_ms: number;
  p99_ms: number;
  statuses: Record<string, number>;
}

export interface OpenLoopResult extends Latencies {
  offered_per_s: number;
  /** the requests due in the warm-up, apart */
  warmup: Latencies;
}

/** An answer not come this long after its request was written counts as none (status 0). */
const ANSWER_TIMEOUT_MS = 120_000;

interface Tally {
  latencies: number[];
  statuses: Record<string, number>;
  sent: number;
}

/**
 * Sends each stream's requests on its timetable for `warmup` and then
 * `seconds`; latency is measured from the time a request was due, so a
 * stalled server cannot hide its queueing (no coordinated omission).
 */
export async function openLoop(
  load: string,
  bases: string[],
  headers: Record<string, string>,
  streams: Stream[],
  seconds: number,
  warmup: number,
  /** appends one CSV line per request (load, stream, when it was due as epoch ms, latency ms, status) */
  traceFile?: string,
  /** told of each answer: its stream, when it was due (ms since the measured load began) and its latency */
  observe?: (stream: string, dueMs: number, latencyMs: number, status: number) => void,
): Promise<Record<string, OpenLoopResult>> {
  const targets = bases.map((base) => rawPool(new URL(base), { maxSockets: 512, timeoutMs: ANSWER_TIMEOUT_MS }));
  const head = headLines(headers);
  const start = performance.now();
  const epochOf = (t: number) => Math.round(performance.timeOrigin + t);
  const trace: string[] = [];
  const measuredFrom = start + warmup * 1000;
  const tally = (): Tally => ({ latencies: [], statuses: {}, sent: 0 });
  const results = Object.fromEntries(streams.map((s) => [s.name, { warm: tally(), measured: tally() }]));
  const inFlight = new Set<Promise<void>>();
  const post = (stream: Stream, i: number, due: number) => {
    const r = due < measuredFrom ? results[stream.name]!.warm : results[stream.name]!.measured;
    const body = stream.body(i);
    r.sent += 1;
    const done = new Promise<void>((resolve) => {
      /** status 0: no answer (the connection failed), which has no latency */
      const finish = (status: number) => {
        const ms = performance.now() - due;
        if (status !== 0) r.latencies.push(ms);
        r.statuses[status] = (r.statuses[status] ?? 0) + 1;
        if (traceFile) trace.push(`${load},${stream.name},${epochOf(due)},${ms.toFixed(1)},${status}`);
        observe?.(stream.name, due - measuredFrom, ms, status);
        stream.answered?.(i, status);
        resolve();
      };
      const target = targets[i % targets.length]!; // round robin, as a load balancer in front of the API processes
      void target.post(stream.path, head, body).then((a) => finish(a.status));
    });
    inFlight.add(done);
    void done.then(() => inFlight.delete(done));
  };
  const next = Object.fromEntries(streams.map((s) => [s.name, 0]));
  const endAt = measuredFrom + seconds * 1000;
  while (performance.now() < endAt) {
    const now = performance.now();
    for (const s of streams) {
      // request i is due at i / rate: sent by the first pass at or after that, not one period later (which added a
      // whole period to every latency: 20 ms to a stream of 50 a second, a second to one of 1 a second)
      const due = Math.floor(((now - start) / 1000) * s.rate) + 1;
      while (next[s.name]! < due) {
        const i = next[s.name]!++;
        post(s, i, start + (i / s.rate) * 1000);
      }
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  await Promise.all([...inFlight]);
  targets.forEach((t) => t.close());
  if (traceFile) writeTrace(traceFile, trace);
  return Object.fromEntries(streams.map((s) => [s.name, { offered_per_s: s.rate, ...latencies(results[s.name]!.measured), warmup: latencies(results[s.name]!.warm) }]));
}

function writeTrace(file: string, lines: string[]): void {
  if (!fs.existsSync(file)) fs.writeFileSync(file, 'load,stream,due_at_ms,latency_ms,status\n');
  fs.appendFileSync(file, lines.map((l) => `${l}\n`).join(''));
}

function latencies(r: Tally): Latencies {
  const lat = r.latencies.sort((a, b) => a - b);
  const pct = (p: number) => round(lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))] ?? 0);
  const ok = Object.entries(r.statuses).filter(([k]) => k.startsWith('2')).reduce((n, [, c]) => n + c, 0);
  return { sent: r.sent, answered: lat.length, non_2xx: r.sent - ok, p50_ms: pct(50), p99_ms: pct(99), statuses: r.statuses };
}

/**
 * 32 random hex digits (an SDK's uuid4 sid or event_id), cut from a pool filled 64 KiB at a time: a call of
 * `randomBytes` per id took about a tenth of the load generator's CPU, on the cores it shares with Lookout.
 */
const randomHex = (() => {
  let pool = Buffer.alloc(0);
  let at = 0;
  return () => {
    if (at + 16 > pool.length) {
      pool = crypto.randomBytes(65_536);
      at = 0;
    }
    at += 16;
    return pool.toString('hex', at - 16, at);
  };
})();
const sid = randomHex;
const now = () => new Date().toISOString();

/** Sessions at `rate` in 100-session batches, and single sessions at `singleRate`. */
export function sessionStreams(rate: number, singleRate: number): Stream[] {
  const statuses = ['ok', 'ok', 'ok', 'ok', 'errored', 'crashed', 'abnormal'];
  const session = (i: number) => ({ sid: sid(), release: `bench@${1 + (i % 3)}`, status: statuses[i % statuses.length], did: `user-${i % 2000}`, started: now() });
  return [
    { name: 'session batches', path: '/api/v1/sessions', rate: rate / 100, body: (i) => JSON.stringify({ sessions: Array.from({ length: 100 }, (_, k) => session(i * 100 + k)) }) },
    { name: 'single sessions', path: '/api/v1/sessions', rate: singleRate, body: (i) => JSON.stringify(session(i)) },
  ];
}

/** Probes: one error event of a new issue a second, in environment probe-<n % 5>; their 202s and notifications, by probe number. */
export const PROBE_CHANNELS = 5;
export const PROBE_KIND = 100_000;
export function makeProbes() {
  return { answered: new Map<number, number>(), notified: new Map<number, number>(), bursts: 0, digests: 0 };
}
export type Probes = ReturnType<typeof makeProbes>;

/** Events at `rate`: one in five an error event (of 50 issues; `large`: about 6 KB each), the others sign-in attempts. */
export function eventStream(rate: number, probes?: Probes, opts: { large?: boolean; browser?: BrowserBundle } = {}): Stream {
  const probeOf = (i: number) => (probes && i % rate === 1 ? Math.floor(i / rate) : null);
  return {
    name: 'events',
    path: '/api/v1/events',
    rate,
    answered: (i, status) => {
      const n = probeOf(i);
      if (n !== null && status === 202) probes!.answered.set(n, Date.now());
    },
    body: (i) => {
      const base = { event_id: randomHex(), timestamp: now() };
      const probe = probeOf(i);
      if (probe !== null) {
        return JSON.stringify(realisticErrorEvent(PROBE_KIND + probe, { at: new Date(), release: 'bench@1', environment: `probe-${probe % PROBE_CHANNELS}`, company: 'probe', level: 'error' }));
      }
      if (i % 5 === 4) {
        const f = Math.floor(i / 5) % 50;
        // a browser's error in the minified bundle, its frames mapped by the worker (bench:pipeline --sourcemaps)
        if (opts.browser) return browserEvent(opts.browser, f, base);
        // ~4 KB, as a server SDK sends it: 20 frames (the in-app ones with source lines and variables), 20 breadcrumbs
        return JSON.stringify(realisticErrorEvent(f, { at: new Date(), release: 'bench@1', environment: 'production', company: `company-${f % 20}`, level: 'error', large: opts.large }));
      }
      // 200 actor/address groups: every tenth fails every time and bursts, the others fail one time in seven
      const g = Math.floor(i / 5) % 200;
      const outcome = g % 10 === 0 || i % 7 === 0 ? 'login_failed' : 'login_succeeded';
      return JSON.stringify({ ...base, security: { kind: outcome, actor: `user${g}@bench.example`, ip: `10.0.${g % 250}.${g % 7}` } });
    },
  };
}

