/**
 * npm run bench:traces -- [--seconds 60] [--tx-rate 500] [--spans 20] [--log-rate 2000] [--event-rate 1000] [--reads 50] [--store-trace DIR]
 *   [--answers FILE]
 *
 * Traces and logs beside the usual error events (issue 69), against a stack of its own (one API, one worker, defaults
 * as shipped), from a fresh start (no warm-up): `--tx-rate` transactions a second, each with `--spans` spans (Sentry
 * envelopes of one transaction, as @sentry/node sends them: 20 groups, a query run six times, an outgoing call),
 * `--log-rate` log lines a second (containers of 25 lines) and `--event-rate` native events (the bench:pipeline mix)
 * for `--seconds`, open loop.
 *
 * Printed: each stream's answers (p50/p99, refused) with each process' CPU (the two cores are 200%: at 180% or more
 * the run had no room, and its latency is not judged); the answers and the host's CPU by 10 s window too (a fresh
 * start's first seconds apart: the verdict stays the whole run's); how long after the load the Performance read
 * counted every acknowledged transaction; bytes on disk per counted transaction in the aggregates and per log line;
 * then, for a second project given 30 days of such aggregates written straight into the store (days and hours;
 * minutes of the last two days, all a window's edges read), the Performance read's p50/p99 over windows of 1 h,
 * 24 h, 7 d and 30 d.
 *
 * Targets: 0 refused; answers p99 < 50 ms (with room); aggregates readable within 2 s; ≤ 60 B per counted
 * transaction in aggregates, ≤ 150 B per log line; Performance reads p99 < 50 ms at 30 days.
 */
import crypto from 'node:crypto';
import { parseArgs } from 'node:util';
import { addTransaction, groupKeyOf, type Bucket } from '../src/domain/perf-buckets.ts';
import type { TransactionRecord } from '../src/domain/transactions.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS, timeKey } from '../src/store/traces.store.ts';
import { clientUrls } from './front.ts';
import { BENCH_INSTANCE, HOST_CPU, hostPercent, hostUse, hostUseWords, hostWorkMs, NO_ROOM_FROM, openBench, refusalsByReason, report, round, waitFor, type HostUse } from './lib.ts';
import { eventStream, openLoop, type Stream } from './load.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string' },
    'tx-rate': { type: 'string' },
    spans: { type: 'string' },
    'log-rate': { type: 'string' },
    'event-rate': { type: 'string' },
    reads: { type: 'string' },
    // each process writes the commands it sends to the store there (src/store/command-trace.ts)
    'store-trace': { type: 'string' },
    // one CSV line per request: when it was due, its latency and status (bench/load.ts openLoop)
    answers: { type: 'string' },
  },
  strict: true,
});
const SECONDS = Number(values.seconds ?? 60);
const TX_RATE = Number(values['tx-rate'] ?? 500);
const SPANS = Number(values.spans ?? 20);
const LOG_RATE = Number(values['log-rate'] ?? 2000);
const EVENT_RATE = Number(values['event-rate'] ?? 1000);
const READS = Number(values.reads ?? 50);
const LINES_PER_CONTAINER = 25;
/** the answers' p99 and the host's CPU are printed by window of this many seconds too */
const WINDOW_S = 10;
const GROUPS = 20;
const READS_INSTANCE = 'bench-reads-0001';
const progress = (line: string) => process.stderr.write(`bench:traces: ${line}\n`);
/** Random hex digits cut from a pool filled 64 KiB at a time (a `randomBytes` call per id costs the load generator more than the ids). */
const hex = (() => {
  let pool = Buffer.alloc(0);
  let at = 0;
  return (bytes: number) => {
    if (at + bytes > pool.length) [pool, at] = [crypto.randomBytes(65_536), 0];
    at += bytes;
    return pool.toString('hex', at - bytes, at);
  };
})();

/** A duration drawn from a long-tailed spread around each group's own typical time (ms). */
const durationOf = (group: number) => (20 + group * 15) * Math.exp((Math.random() - 0.5) * 1.6);

/** One transaction envelope as @sentry/node sends it: a route, its middleware, six of one query (an N+1), an outgoing call. */
function transactionEnvelope(i: number, publicKey: string): string {
  const group = i % GROUPS;
  const trace = hex(16);
  const root = hex(8);
  const end = Date.now() / 1000;
  const ms = durationOf(group);
  const start = end - ms / 1000;
  const spans = Array.from({ length: SPANS }, (_, k) => {
    const op = k < 6 ? 'db.query' : k === 6 ? 'http.client' : k % 2 ? 'middleware.koa' : 'function';
    const description = k < 6 ? `SELECT * FROM orders WHERE customer_id = ${i} AND line = ${k}` : k === 6 ? `GET http://inventory.internal/items/${i}` : `handler ${k}`;
    const s = start + ((ms / 1000) * k) / SPANS;
    return { span_id: hex(8), parent_span_id: root, trace_id: trace, op, description, start_timestamp: s, timestamp: s + ms / 1000 / SPANS, status: 'ok', origin: 'auto.http.otel', data: { 'sentry.op': op, 'sentry.origin': 'auto.http.otel' } };
  });
  const failed = i % 50 === 0;
  const tx = {
    type: 'transaction',
    transaction: `GET /api/resource-${group}/:id`,
    transaction_info: { source: 'route' },
    start_timestamp: start,
    timestamp: end,
    release: 'bench@1',
    environment: 'production',
    platform: 'node',
    contexts: { trace: { trace_id: trace, span_id: root, op: 'http.server', status: failed ? 'internal_error' : 'ok', data: { 'http.request.method': 'GET', 'http.route': `/api/resource-${group}/:id` } }, response: { status_code: failed ? 500 : 200 } },
    request: { method: 'GET', url: `http://bench.example/api/resource-${group}/${i}` },
    spans,
  };
  const header = { event_id: hex(16), sent_at: new Date().toISOString(), sdk: { name: 'sentry.javascript.node', version: '10.0.0' }, trace: { trace_id: trace, public_key: publicKey, sample_rate: '1', sampled: 'true', environment: 'production', release: 'bench@1' } };
  return [header, { type: 'transaction' }, tx].map((x) => JSON.stringify(x)).join('\n');
}

/** A log container of LINES_PER_CONTAINER lines, as @sentry/node 10 sends them (each with its trace and attributes). */
function logEnvelope(i: number): string {
  const now = Date.now() / 1000;
  const items = Array.from({ length: LINES_PER_CONTAINER }, (_, k) => ({
    timestamp: now,
    trace_id: hex(16),
    level: k % 10 === 0 ? 'warn' : 'info',
    severity_number: k % 10 === 0 ? 13 : 9,
    body: `handled request ${i * LINES_PER_CONTAINER + k} for customer ${k % 97} in ${k * 3} ms`,
    attributes: {
      'sentry.environment': { type: 'string', value: 'production' },
      'sentry.release': { type: 'string', value: 'bench@1' },
      'sentry.trace.parent_span_id': { type: 'string', value: hex(8) },
      'sentry.sdk.name': { type: 'string', value: 'sentry.javascript.node' },
      customer: { type: 'integer', value: k % 97 },
    },
  }));
  return [{ sent_at: new Date().toISOString() }, { type: 'log', item_count: items.length, content_type: 'application/vnd.sentry.items.log+json' }, { version: 2, items }].map((x) => JSON.stringify(x)).join('\n');
}

/** A minute's bucket of GROUPS groups, as 30,000 transactions (500 a second) would leave it. */
function generatedMinute(samples: TransactionRecord[]): Bucket {
  const b: Bucket = {};
  for (const tx of samples) addTransaction(b, groupKeyOf({ environment: 'production', release: 'bench@1', name: tx.name, op: tx.op, method: 'GET' }), tx);
  // scale the sampled counts to a minute's worth
  for (const c of Object.values(b)) {
    const k = (TX_RATE * 60) / samples.length;
    c.n = Math.round(c.n * k);
    c.x = c.n;
    c.e = Math.round(c.e * k);
    c.s = Math.round(c.s * k);
    for (const h of Object.keys(c.h)) c.h[h] = Math.round(c.h[h]! * k);
    for (const s of Object.values(c.sp ?? {})) [s.n, s.t, s.tx, s.r] = [s.n * k, s.t * k, s.tx * k, s.r * k].map(Math.round) as [number, number, number, number];
  }
  return b;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? null : round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!, 1);
};

const env = await openBench({ seconds: SECONDS, concurrency: 1, workers: 1, workerConcurrency: 4 }, values['store-trace'] ? { STORE_TRACE_DIR: values['store-trace'] } : {});
const { runtime, stack, project } = env;
const db = runtime.mongo.db;
const sizeOf = async (names: string[]) => {
  let bytes = 0;
  for (const name of names) bytes += Number((await db.command({ collStats: name }).catch(() => ({ size: 0 }))).size ?? 0);
  return bytes;
};
const AGGREGATES = ['perf_minutes', 'perf_hours', 'perf_days', 'perf_parts', 'perf_names'];

try {
  const hostWork = hostWorkMs();
  const id = Number(project.id);
  const envelopePath = `/api/${id}/envelope/?sentry_key=${project.public_key}`;
  const streams: Stream[] = [
    { name: 'transactions', path: envelopePath, rate: TX_RATE, body: (i) => transactionEnvelope(i, project.public_key) },
    { name: 'logs', path: envelopePath, rate: LOG_RATE / LINES_PER_CONTAINER, body: logEnvelope },
    ...(EVENT_RATE > 0 ? [eventStream(EVENT_RATE)] : []),
  ];
  progress(`${TX_RATE} transactions/s (${SPANS} spans each), ${LOG_RATE} log lines/s, ${EVENT_RATE} events/s for ${SECONDS} s, starting ${round((performance.now() - stack.listeningAt()) / 1000, 1)} s after the API's listening line`);
  const clients = await clientUrls(stack);
  const use = hostUse(stack);
  // the answers and the host's CPU by window of WINDOW_S: a fresh start's first seconds apart from the rest
  const windowLatencies: number[][] = [];
  const windowUse: HostUse[] = [];
  let windowStarted = hostUse(stack);
  const windowTimer = setInterval(() => {
    windowUse.push(windowStarted());
    windowStarted = hostUse(stack);
  }, WINDOW_S * 1000);
  const observe = (_stream: string, dueMs: number, latencyMs: number, status: number) => {
    if (status !== 0) (windowLatencies[Math.max(0, Math.floor(dueMs / 1000 / WINDOW_S))] ??= []).push(latencyMs);
  };
  const load = await openLoop('traces', clients, { 'content-type': 'application/json', 'x-service-key': project.secret_key, 'x-service-instance': BENCH_INSTANCE }, streams, SECONDS, 0, values.answers, observe);
  clearInterval(windowTimer);
  const host = use();
  const windows = windowLatencies.map((ms, w) => ({
    from_s: w * WINDOW_S,
    answered: ms.length,
    p50_ms: pct(ms, 50),
    p99_ms: pct(ms, 99),
    over_50_ms: ms.filter((x) => x > 50).length,
    host: windowUse[w] ?? null,
  }));
  const loadEnded = performance.now();
  const acknowledged = Number(load.transactions!.statuses['200'] ?? 0);
  progress(`refused by reason: ${JSON.stringify(await refusalsByReason(stack.apiUrls[0]!))}`);
  for (const [name, r] of Object.entries(load)) progress(`${name}: ${r.sent} sent, p50 ${r.p50_ms} / p99 ${r.p99_ms} ms, statuses ${JSON.stringify(r.statuses)}`);
  progress(`load over: ${acknowledged} transactions acknowledged; ${hostUseWords(host)}; waiting for the Performance read to count them`);
  // readable: the Performance read counts every acknowledged transaction (parts included: nothing waits for the rollup)
  let counted = 0;
  const readable = await waitFor(async () => {
    const groups = await runtime.performance.groups(id, { from: Date.now() - 3600_000, to: Date.now() + 1 });
    counted = groups.reduce((n, g) => n + g.count, 0);
    return counted >= acknowledged;
  }, 120_000);
  const readableAfter = readable === null ? null : round((performance.now() - loadEnded) / 1000, 2);
  // on disk, once the rollup has merged the parts into minutes
  await waitFor(async () => (await runtime.stores.traces.pendingParts(1)).length === 0 && (await runtime.stores.traces.backlog.size()) === 0, 120_000);
  const aggregateBytes = await sizeOf(AGGREGATES);
  const logBytes = await sizeOf(['log_chunks']);
  const sampleBytes = await sizeOf(['trace_samples']);
  const lines = Number(load.logs!.statuses['200'] ?? 0) * LINES_PER_CONTAINER;
  const perTx = round(aggregateBytes / Math.max(1, counted), 1);
  const perLine = round(logBytes / Math.max(1, lines), 1);

  // 30 days of aggregates for a second project, written straight into the store, then read as the page reads them
  progress('writing 30 days of aggregates for the read benchmark');
  const org = await runtime.admin.createOrg({ name: 'Reads', plan: 'business', seats: null });
  const reads = await runtime.admin.createProject({ org: Number(org.id), name: 'reads', securityMonitoring: false });
  const readsId = Number(reads.id);
  await runtime.sdk.activate((await runtime.stores.projects.get(readsId))!, { instance_id: READS_INSTANCE }, new Date());
  const records: TransactionRecord[] = Array.from({ length: 2000 }, (_, i) => {
    const group = i % GROUPS;
    const ms = durationOf(group);
    const spans = Array.from({ length: SPANS }, (_, k) => ({ span_id: hex(8), parent_span_id: null, op: k < 6 ? 'db.query' : 'function', description: k < 6 ? `SELECT * FROM orders WHERE customer_id = ${i}` : `handler ${k}`, start: 0, end: ms / SPANS, status: 'ok' }));
    return { event_id: hex(16), trace_id: hex(16), span_id: hex(8), parent_span_id: null, name: `GET /api/resource-${group}/:id`, source: 'route', op: 'http.server', method: 'GET', environment: 'production', release: 'bench@1', start: 0, end: ms, status: i % 50 ? 'ok' : 'internal_error', failed: i % 50 === 0, http_status: 200, vitals: {}, spans, platform: 'node', user: null, url: null, sample_rate: null, notes: {} };
  });
  const minute = generatedMinute(records);
  const now = Date.now();
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const docs = (from: number, to: number, step: number, scale: number) => {
    const out = [];
    for (let t = from; t < to; t += step) out.push({ _id: timeKey(readsId, t), b: scaled(minute, scale) });
    return out;
  };
  const write = async (period: 'minute' | 'hour' | 'day', list: { _id: string; b: Bucket }[]) => {
    for (let i = 0; i < list.length; i += 200) await runtime.stores.traces.insertBuckets(period, list.slice(i, i + 200));
  };
  // summed up to now, as on an install that has been running: the rollup does not sum the generated minutes again
  await runtime.stores.traces.setRolledUntil('hour', Math.floor((now - 3 * 60_000) / HOUR_MS) * HOUR_MS);
  await runtime.stores.traces.setRolledUntil('day', today);
  const written = performance.now();
  await write('day', docs(today - 30 * DAY_MS, today, DAY_MS, 1440));
  await write('hour', docs(today - 30 * DAY_MS, Math.floor(now / HOUR_MS) * HOUR_MS, HOUR_MS, 60));
  // minutes of the last two days: no window reads older ones (a longer window reads whole hours and days between
  // its edges, and an edge is under an hour of minutes), so older ones would only lengthen the write
  await write('minute', docs(Math.floor((now - 2 * DAY_MS) / MINUTE_MS) * MINUTE_MS, Math.floor(now / MINUTE_MS) * MINUTE_MS, MINUTE_MS, 1));
  await runtime.stores.traces.saveNames(readsId, new Map(Object.keys(minute).map((k, i) => [k, { environment: 'production', release: 'bench@1', name: `GET /api/resource-${i}/:id`, op: 'http.server', method: 'GET' }])), new Map());
  progress(`written in ${round((performance.now() - written) / 1000, 1)} s; reading`);
  const readTimes: Record<string, { p50_ms: number | null; p99_ms: number | null; groups: number }> = {};
  for (const range of ['1h', '24h', '7d', '30d']) {
    const ms: number[] = [];
    let groups = 0;
    for (let r = 0; r < READS; r++) {
      const started = performance.now();
      const res = await fetch(`${stack.apiUrls[0]}/api/v1/performance?range=${range}`, { headers: { 'x-service-key': reads.secret_key, 'x-service-instance': READS_INSTANCE } });
      const body = (await res.json()) as { groups?: unknown[] };
      ms.push(performance.now() - started);
      groups = body.groups?.length ?? -res.status;
    }
    readTimes[range] = { p50_ms: pct(ms, 50), p99_ms: pct(ms, 99), groups };
  }

  const refused = Object.fromEntries(Object.entries(load).map(([name, r]) => [name, r.non_2xx]));
  const targets = {
    none_refused: Object.values(refused).every((n) => n === 0),
    answers_p99_under_50_ms: Object.values(load).every((r) => r.p99_ms < 50),
    readable_within_2_s: readableAfter !== null && readableAfter <= 2,
    aggregate_bytes_per_transaction_at_most_60: perTx <= 60,
    log_bytes_per_line_at_most_150: perLine <= 150,
    performance_reads_p99_under_50_ms: Object.values(readTimes).every((r) => (r.p99_ms ?? Infinity) < 50),
  };
  report(
    'bench:traces',
    { seconds: SECONDS, host_work_ms: hostWork, load, host, windows, acknowledged_transactions: acknowledged, counted_transactions: counted, readable_after_s: readableAfter, bytes: { aggregates: aggregateBytes, per_transaction: perTx, logs: logBytes, per_log_line: perLine, samples: sampleBytes }, reads: readTimes, targets, latency_judged: host.room },
    [
      ['host', `work baseline ${hostWork} ms; the two cores are ${HOST_CPU}%, at ${NO_ROOM_FROM}% or more the run had no room`],
      ...Object.entries(load).map(([name, r]): [string, string] => [name, `${r.sent} sent at ${round(r.offered_per_s, 1)}/s, ${r.non_2xx} not 2xx, p50 ${r.p50_ms} / p99 ${r.p99_ms} ms`]),
      ['CPU', hostUseWords(host)],
      ...windows.map((w): [string, string] => [
        `answers due ${w.from_s}–${w.from_s + WINDOW_S} s`,
        `p50 ${w.p50_ms} / p99 ${w.p99_ms} ms, ${w.over_50_ms} of ${w.answered} over 50 ms; ${w.host ? `CPU ${hostPercent(w.host)}% of ${HOST_CPU}${w.host.room ? '' : ' (no room)'}` : 'CPU not read'}`,
      ]),
      ['Performance read counted every transaction after', `${readableAfter ?? '> 120'} s (${counted} of ${acknowledged})`],
      ['aggregates on disk', `${aggregateBytes} B: ${perTx} B per counted transaction`],
      ['log lines on disk', `${logBytes} B: ${perLine} B per line (${lines} lines)`],
      ['samples on disk', `${sampleBytes} B`],
      ...Object.entries(readTimes).map(([range, r]): [string, string] => [`Performance read, ${range} of 30 days`, `p50 ${r.p50_ms} / p99 ${r.p99_ms} ms (${r.groups} groups)`]),
      ...Object.entries(targets).map(([k, v]): [string, string] => [k, String(v)]),
      ['latency judged (room)', String(host.room)],
    ],
  );
} finally {
  await env.close();
}

/** A copy of a bucket with every count multiplied (an hour is 60 minutes of it, a day 1,440). */
function scaled(b: Bucket, k: number): Bucket {
  const out = JSON.parse(JSON.stringify(b)) as Bucket;
  for (const c of Object.values(out)) {
    c.n *= k;
    c.x *= k;
    c.e *= k;
    c.s *= k;
    for (const h of Object.keys(c.h)) c.h[h]! *= k;
    for (const s of Object.values(c.sp ?? {})) [s.n, s.t, s.tx, s.r] = [s.n * k, s.t * k, s.tx * k, s.r * k];
  }
  return out;
}
