/**
 * npm run bench:sessions [-- --seconds N --concurrency N --workers N --worker-concurrency N]
 *
 * Ingest throughput and latency of POST /api/v1/sessions for single
 * sessions and 100-session batches, the time until workers have drained and
 * the rollups match a recount, and two same-run baselines: a bare Node HTTP
 * server answering 202, and a raw driver insertMany + BullMQ addBulk of the
 * same sessions without HTTP.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { emptyState, replayPart } from '../src/domain/release-health.ts';
import { partsOf } from '../src/state/rebuild.ts';
import { total } from '../src/domain/sessions.ts';
import { benchArgs, DRAIN_LIMIT_MS, openBench, report, round, runLoad, waitFor } from './lib.ts';

const args = benchArgs();
const single = (i: number) => JSON.stringify({ sid: `bench-s-${i}-xxxxxxxx`, release: 'bench@1', status: i % 10 === 0 ? 'crashed' : 'ok', did: `u${i % 500}` });
const batch = (i: number) =>
  JSON.stringify({ sessions: Array.from({ length: 100 }, (_, k) => ({ sid: `bench-b-${i}-${k}-xxxx`, release: 'bench@1', status: k % 20 === 0 ? 'errored' : 'ok', did: `u${k}` })) });

const bench = await openBench(args, '/api/v1/sessions', single);
const { baseline: bareSingle, stack, config, runtime, project } = bench;
try {
  const headers = { 'content-type': 'application/json', 'x-service-key': project.public_key };
  const url = `${stack.apiUrl}/api/v1/sessions`;

  // backlog samples during the load: a growing backlog means workers fall behind
  const backlog: number[] = [];
  const sampler = setInterval(() => void runtime.stores.sessions.backlogSize().then((n) => backlog.push(n)), 1000);
  const singles = await runLoad({ url, headers, body: single, seconds: args.seconds, concurrency: args.concurrency });
  const batches = await runLoad({ url, headers, body: batch, seconds: args.seconds, concurrency: args.concurrency });
  clearInterval(sampler);
  const loadEnd = performance.now();
  const drainSeconds = await waitFor(async () => (await runtime.stores.sessions.backlogSize()) === 0, DRAIN_LIMIT_MS);
  const processedSeconds = round((performance.now() - loadEnd) / 1000);

  const pid = Number(project.id);
  const stored = await runtime.stores.sessions.releases.find({ project_id: pid }).toArray();
  const counted = emptyState();
  for await (const b of runtime.stores.sessions.batchesOf(pid)) replayPart(pid, counted, b._id, partsOf(b).get(pid)!, b.received_at, config.sessionUpdateWindowMs);
  const rollupsMatch = stored.every((d) => JSON.stringify({ sessions: d.sessions, users: d.users }) === JSON.stringify(counted.releases.get(d._id)));
  const sessionsAccepted = singles.accepted + batches.accepted * 100;
  const sessionsStored = stored.reduce((n, d) => n + total(d.sessions), 0);

  // Baseline 2: the same batches straight into the store and the queue, no HTTP.
  const scratch = runtime.mongo.db.collection('bench_raw');
  const redis = new Redis(stack.redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue('bench-raw', { connection: redis, prefix: config.queuePrefix });
  let rawBatches = 0;
  const rawStart = performance.now();
  const rawEnd = rawStart + args.seconds * 1000;
  await Promise.all(
    Array.from({ length: args.concurrency }, async () => {
      while (performance.now() < rawEnd) {
        const i = rawBatches++;
        const doc = { received_at: new Date(), requests: [{ project_id: pid, ...JSON.parse(batch(i)) }] };
        const { insertedIds } = await scratch.insertMany([doc]);
        await queue.addBulk([{ name: 'raw', data: { id: String(insertedIds[0]) } }]);
      }
    }),
  );
  const rawSessionsPerS = round((rawBatches * 100) / ((performance.now() - rawStart) / 1000));
  await queue.obliterate({ force: true }).catch(() => {});
  await queue.close();
  redis.disconnect();

  const result = {
    args,
    store: process.env.MONGODB_URL ? 'given MONGODB_URL' : 'embedded FerretDB 1.24 (SQLite)',
    baseline_bare_http: { requests_per_s: bareSingle.requests_per_s, p50_ms: bareSingle.p50_ms, p99_ms: bareSingle.p99_ms },
    baseline_raw_store_queue: { sessions_per_s: rawSessionsPerS },
    single: { ...singles, sessions_per_s: round(singles.accepted / singles.seconds), ratio_to_bare: round(singles.requests_per_s / bareSingle.requests_per_s, 3) },
    batch_100: { ...batches, sessions_per_s: round((batches.accepted * 100) / batches.seconds), ratio_to_raw: round((batches.accepted * 100) / batches.seconds / rawSessionsPerS, 3) },
    drain: {
      seconds_after_load: drainSeconds,
      backlog_left: await runtime.stores.sessions.backlogSize(),
      processed_seconds: processedSeconds,
      backlog_samples: backlog,
      sessions_accepted: sessionsAccepted,
      sessions_in_rollups: sessionsStored,
      rollups_match_recount: rollupsMatch,
    },
  };
  report('bench:sessions', result, [
    ['bare HTTP 202 (req/s)', bareSingle.requests_per_s],
    ['single: req/s', singles.requests_per_s],
    ['single: ratio to bare', result.single.ratio_to_bare],
    ['single: p50 / p99 ms', `${singles.p50_ms} / ${singles.p99_ms}`],
    ['raw insertMany+addBulk (sessions/s)', rawSessionsPerS],
    ['batch: req/s', batches.requests_per_s],
    ['batch: sessions/s', result.batch_100.sessions_per_s],
    ['batch: ratio to raw', result.batch_100.ratio_to_raw],
    ['batch: p50 / p99 ms', `${batches.p50_ms} / ${batches.p99_ms}`],
    ['drain after load (s)', drainSeconds],
    ['backlog samples (batches)', backlog.join(' ')],
    ['sessions accepted / in rollups', `${sessionsAccepted} / ${sessionsStored}`],
    ['rollups match recount', String(rollupsMatch)],
  ]);
} finally {
  await bench.close();
}
