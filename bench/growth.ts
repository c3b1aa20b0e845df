/**
 * npm run bench:growth -- [--rounds 6] [--seconds 45] [--event-rate 1000] [--session-rate 5000] [--calibrate 20000] [--trace DIR]
 *
 * How Lookout fares as its stores fill (issue 25), on a stack of its own with
 * `npm start`'s embedded stores (FerretDB on SQLite, one redis-server with
 * its append-only file), one API and one worker process:
 *
 * 1. Disk per item of each kind, measured apart on the empty stack:
 *    `--calibrate` sign-in attempts, then as many ~6 KB error events, then as
 *    many sessions (in 100-session batches), each kind posted alone; the
 *    growth of what the stores hold on disk (the database's pages, and Redis'
 *    AOF once rewritten) divided by the items.
 * 2. `--rounds` rounds of `--seconds` of fixed-rate load, events (one in five
 *    a ~6 KB error event, the others sign-in attempts) and sessions at once.
 *    After each: ingest p99 of each stream, the share of the CPU time the
 *    hypervisor stole during the round (a shared host's), the CPU each
 *    process used (API, worker, Redis, FerretDB and the load generator, in %
 *    of one core) and their sum (the host has 200, and latencies climb as
 *    they near it: the end says whether the busiest round left room to judge
 *    the latency target),
 *    read latencies (the issue list, an issue's events, the release list),
 *    what is stored, bytes on disk per event and per session (MongoDB's
 *    collection sizes), Redis' AOF as it stands (not rewritten: Redis
 *    rewrites it on its own schedule, as in a long run) and Redis' memory.
 *    With `--trace DIR`, each round's requests go to `DIR/round-<n>-<stream>.csv`
 *    (when each was due, its latency and status; the first round's warm-up
 *    included), and each command the API and the worker sent to the store to
 *    `DIR/store-commands-<pid>.tsv` (STORE_TRACE_DIR), and when Redis began and
 *    ended each AOF rewrite to `DIR/redis-rewrites.csv`, to line up slow seconds
 *    with what else the host and the store did then.
 * 3. `lookout admin recount` of the project (its time and the process's peak
 *    memory), and a restart of the whole stack, stores included, on its data
 *    (the time to stop, and from starting again until `/readyz` answers ready).
 *
 * Beside them, as a baseline: how long a fixed piece of CPU work took on the idle host
 * before the stack started (`hostWorkMs`, bench/lib.ts), to tell a slow host from a slow build.
 *
 * Targets (issue 25): disk per error event ≤ 3 KB, per sign-in attempt ≤ 400 B,
 * per session ≤ 100 B; last round's ingest p99 within 1.5× the first's and
 * < 50 ms; recount peak memory ≤ 512 MB and restart ready ≤ 15 s, at ≥ 1 M
 * sessions and ≥ 250,000 events stored.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { total } from '../src/domain/sessions.ts';
import { eventStream, openLoop, sessionStreams, type OpenLoopResult, type Stream } from './load.ts';
import { BENCH_INSTANCE, HOST_CPU, hostPercent, hostUse, hostWorkMs, NO_ROOM_FROM, openBench, report, round, timedInTurn, waitFor } from './lib.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    'event-rate': { type: 'string' },
    'session-rate': { type: 'string' },
    calibrate: { type: 'string' },
    trace: { type: 'string' },
  },
  strict: true,
});
const ROUNDS = Number(values.rounds ?? 6);
const SECONDS = Number(values.seconds ?? 45);
const EVENT_RATE = Number(values['event-rate'] ?? 1000);
const SESSION_RATE = Number(values['session-rate'] ?? 5000);
/** `--calibrate 0` skips the disk per item and measures the rounds only */
const CALIBRATE = Number(values.calibrate ?? 20_000);
const TRACE_DIR = values.trace;
if (TRACE_DIR) fs.mkdirSync(TRACE_DIR, { recursive: true });
const traceFile = (r: number, stream: string) => (TRACE_DIR ? path.join(TRACE_DIR, `round-${r}-${stream}.csv`) : undefined);
const BIN = fileURLToPath(new URL('../bin/lookout.mjs', import.meta.url));
const SETTLE_LIMIT_MS = 300_000;

const progress = (what: string) => process.stderr.write(`bench:growth ${new Date().toISOString()} ${what}\n`);

const hostMs = hostWorkMs();
// With --trace, the API and the worker trace their store commands beside the requests (STORE_TRACE_DIR).
const env = await openBench({ seconds: SECONDS, concurrency: 1, workers: 1, workerConcurrency: 4 }, TRACE_DIR ? { STORE_TRACE_DIR: path.resolve(TRACE_DIR) } : {});
const { stack, runtime, project } = env;
const projectId = Number(project.id);
const eventHeaders = { 'content-type': 'application/json', 'x-service-key': project.secret_key, 'x-service-instance': BENCH_INSTANCE };
const sessionHeaders = { 'content-type': 'application/json', 'x-service-key': project.public_key };
const redis = new Redis(stack.redisUrl);
// The stack's Redis stops for a while in restart(): the client reconnects, and its refused connections are no news.
redis.on('error', () => {});

/** Bytes of the files under `dir` whose names match. */
function filesBytes(dir: string, match: (name: string) => boolean = () => true): number {
  let bytes = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && match(entry.name)) bytes += fs.statSync(path.join(entry.parentPath ?? dir, entry.name)).size;
  }
  return bytes;
}

/** Redis' append-only file as it stands: its base (the dataset when last rewritten) and the commands since. */
const aofFileBytes = () => filesBytes(stack.dataDirs.redis, (name) => name.includes('.aof') || name.endsWith('.rdb'));

/** Redis' append-only file, rewritten first: the dataset alone, what a restart reads. */
async function rewrittenAofBytes(): Promise<number> {
  await redis.bgrewriteaof().catch(() => {}); // one already running: wait for it
  await waitFor(async () => {
    const persistence = await redis.info('persistence');
    return /aof_rewrite_in_progress:0/.test(persistence) && /aof_rewrite_scheduled:0/.test(persistence);
  }, 120_000);
  return aofFileBytes();
}

/**
 * The database's pages as MongoDB reports them (`dbStats` totalSize: on FerretDB the SQLite pages its tables and
 * indexes use, without the write-ahead log and the file's free pages, which would blur a difference of a few megabytes).
 */
async function databaseBytes(): Promise<number> {
  const stats = await runtime.mongo.db.command({ dbStats: 1 });
  return Number(stats.totalSize ?? Number(stats.storageSize ?? 0) + Number(stats.indexSize ?? 0));
}

/**
 * What the stores hold on disk, for the disk per item: the database's pages and the rewritten AOF. Only the
 * calibration rewrites the AOF: a rewrite forced between rounds would reset Redis' own schedule of rewrites, and the
 * rounds would no longer meet them as a long run does.
 */
async function diskBytes(): Promise<{ sqlite: number; aof: number }> {
  return { sqlite: await databaseBytes(), aof: await rewrittenAofBytes() };
}

const settled = () =>
  waitFor(async () => (await runtime.stores.events.backlog.size()) + (await runtime.stores.sessions.backlog.size()) === 0, SETTLE_LIMIT_MS);

/**
 * Sign-in attempts and raw session batches as they are kept: the worker's repackers rewrite each minute of attempts,
 * and delete the documents of the session batches copied into parts, a minute after it ends
 * (src/services/repack.service.ts), so this waits for them, up to three minutes.
 */
async function repacked() {
  const pending = async () => (await runtime.issuesState.repackList(projectId).pending()) + (await runtime.sessionState.partedList.pending());
  if ((await pending()) === 0) return;
  progress('waiting for the sign-in attempts and session batches to be repacked');
  await waitFor(async () => (await pending()) === 0, 200_000);
}

/** Figures of a calibration skipped (`--calibrate 0`): NaN meets no target. */
const NOT_MEASURED = { items: 0, sqlite_bytes_per_item: NaN, aof_bytes_per_item: NaN, bytes_per_item: NaN };

/** `count` items of one stream at `rate`; the disk they added, per item (`per`: items per request). */
async function calibrate(name: string, stream: Stream, count: number, per = 1) {
  if (count === 0) return NOT_MEASURED;
  const before = await diskBytes();
  const seconds = count / per / stream.rate;
  progress(`calibrating: ${count} ${name} at ${stream.rate * per}/s`);
  const load = await openLoop(`calibrate ${name}`, stack.apiUrls, stream.path === '/api/v1/events' ? eventHeaders : sessionHeaders, [stream], seconds, 0);
  await settled();
  await repacked();
  const after = await diskBytes();
  const items = (load[stream.name]!.sent - load[stream.name]!.non_2xx) * per;
  return {
    items,
    sqlite_bytes_per_item: round((after.sqlite - before.sqlite) / items),
    aof_bytes_per_item: round((after.aof - before.aof) / items),
    bytes_per_item: round((after.sqlite - before.sqlite + after.aof - before.aof) / items),
  };
}

/** One stream of the events load alone: only sign-in attempts, or only error events (~6 KB). */
function only(kind: 'attempts' | 'errors', rate: number): Stream {
  const all = eventStream(5 * rate, undefined, { large: true });
  // eventStream makes every fifth request an error event: take the ones of the kind asked
  const pick = (i: number) => (kind === 'errors' ? 5 * i + 4 : i + Math.floor(i / 4));
  return { ...all, name: kind, rate, body: (i) => all.body(pick(i)) };
}

/** Bytes MongoDB reports for a collection (FerretDB: its SQLite table's pages). */
async function collectionBytes(name: string): Promise<number> {
  const stats = await runtime.mongo.db.command({ collStats: name });
  return Number(stats.storageSize ?? stats.size ?? 0) + Number(stats.totalIndexSize ?? 0);
}

async function reads() {
  const get = (url: string) => fetch(`${stack.apiUrl}${url}`, { headers: { 'x-service-key': project.secret_key, 'x-service-instance': BENCH_INSTANCE } }).then((r) => r.text());
  const list = JSON.parse(await get('/api/v1/issues?order=event_count&limit=1')) as { issues: { id: string }[] };
  const issue = list.issues[0]?.id;
  return {
    issue_list: await timedInTurn(100, () => get('/api/v1/issues')),
    issue_events: issue ? await timedInTurn(100, () => get(`/api/v1/issues/${issue}/events?limit=25`)) : null,
    releases: await timedInTurn(100, () => get('/api/v1/releases')),
  };
}

/** Runs `lookout admin recount`, sampling its peak resident memory (VmHWM). */
function recount(): Promise<{ seconds: number; peak_rss_mb: number; code: number | null; output: string }> {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, [BIN, 'admin', 'recount', '--project', String(projectId)], { env: stack.env });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => {
      output += d;
      progress(String(d).trim());
    });
    let peak = 0;
    const sample = setInterval(() => {
      try {
        const kb = Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0);
        peak = Math.max(peak, kb);
      } catch {
        /* exited */
      }
    }, 50);
    child.on('exit', (code) => {
      clearInterval(sample);
      resolve({ seconds: round((performance.now() - started) / 1000), peak_rss_mb: round(peak / 1024), code, output: output.slice(-2000) });
    });
  });
}

/**
 * Restarts the whole stack on its data: how long stopping took (workers finish their jobs in flight, up to
 * SHUTDOWN_TIMEOUT_MS), and the time from starting again until /readyz answers ready (the target).
 */
async function restart(): Promise<{ stop_seconds: number; ready_seconds: number | null }> {
  const { stopMs, startMs } = await stack.restart();
  const started = performance.now() - startMs;
  const ready = await waitFor(async () => (await fetch(`${stack.apiUrl}/readyz`).then((r) => r.status).catch(() => 0)) === 200, 120_000);
  return { stop_seconds: round(stopMs / 1000), ready_seconds: ready === null ? null : round((performance.now() - started) / 1000) };
}

/**
 * With --trace, when Redis began and ended each rewrite of its AOF during the rounds (`DIR/redis-rewrites.csv`: epoch
 * ms, began or ended), from INFO persistence read every 250 ms: a rewrite writes the whole dataset to disk at once.
 */
function traceRewrites(): () => void {
  if (!TRACE_DIR) return () => {};
  const file = path.join(TRACE_DIR, 'redis-rewrites.csv');
  fs.writeFileSync(file, 'at_ms,rewrite\n');
  let rewriting = false;
  const timer = setInterval(() => {
    redis
      .info('persistence')
      .then((info) => {
        const now = /aof_rewrite_in_progress:1/.test(info);
        if (now !== rewriting) fs.appendFileSync(file, `${Date.now()},${now ? 'began' : 'ended'}\n`);
        rewriting = now;
      })
      .catch(() => {});
  }, 250);
  return () => clearInterval(timer);
}

const p99 = (r: OpenLoopResult) => r.p99_ms;

function hostRoom(room: { cpu_percent: number; busiest_round_percent: number; no_room_from: number }): string {
  const used = `the busiest round used ${room.busiest_round_percent} of the host's ${room.cpu_percent} (% of a core)`;
  return room.busiest_round_percent >= room.no_room_from
    ? `${used}: no room, requests queued for a core; the last round's latency target is not judged by this run`
    : `${used}: room to judge the last round's latency target`;
}
try {
  const perItem = {
    sign_in_attempt: await calibrate('sign-in attempts', only('attempts', 800), CALIBRATE),
    error_event: await calibrate('error events', only('errors', 200), CALIBRATE),
    session: await calibrate('sessions', sessionStreams(SESSION_RATE, 1)[0]!, CALIBRATE * 10, 100),
  };

  const rounds = [];
  const stopRewriteTrace = traceRewrites();
  for (let r = 1; r <= ROUNDS; r++) {
    progress(`round ${r}: ${EVENT_RATE} events/s and ${SESSION_RATE} sessions/s for ${SECONDS} s`);
    const streams = [eventStream(EVENT_RATE, undefined, { large: true }), sessionStreams(SESSION_RATE, 1)[0]!];
    const use = hostUse(stack);
    const [events, sessions] = await Promise.all([
      openLoop(`round ${r} events`, stack.apiUrls, eventHeaders, [streams[0]!], SECONDS, r === 1 ? 5 : 0, traceFile(r, 'events')),
      openLoop(`round ${r} sessions`, stack.apiUrls, sessionHeaders, [streams[1]!], SECONDS, r === 1 ? 5 : 0, traceFile(r, 'sessions')),
    ]);
    const host = use();
    const settle = await settled();
    const stored = {
      events: await runtime.stores.events.collection.estimatedDocumentCount(),
      sessions: (await runtime.stores.sessions.releases.find({ project_id: projectId }).toArray()).reduce((n, d) => n + total(d.sessions), 0),
    };
    const rawBatches = await collectionBytes('session_raw');
    const eventsBytes = await collectionBytes('events');
    const disk = { sqlite: await databaseBytes(), aof_as_it_stands: aofFileBytes(), sqlite_files: filesBytes(stack.dataDirs.ferretdb, (name) => !name.endsWith('.log')) };
    const memory = Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);
    const row = {
      round: r,
      events_p99_ms: p99(events.events!),
      session_batches_p99_ms: p99(sessions['session batches']!),
      non_2xx: events.events!.non_2xx + sessions['session batches']!.non_2xx,
      cpu_steal_percent: host.cpu_steal_percent,
      cpu_percent: host.cpu_percent,
      cpu_percent_sum: host.cpu_percent_sum,
      host_busy_percent: host.host_busy_percent,
      settled_seconds: settle,
      reads: await reads(),
      stored,
      events_collection_bytes_per_event: round(eventsBytes / Math.max(1, stored.events)),
      session_raw_bytes_per_session: round(rawBatches / Math.max(1, stored.sessions)),
      disk_bytes: disk,
      redis_used_memory_bytes: memory,
    };
    progress(JSON.stringify(row));
    rounds.push(row);
  }

  stopRewriteTrace();
  progress('recount');
  const recounted = await recount();
  progress('restart');
  const readyAfter = await restart();

  // `--rounds 0` measures the disk per item only
  const first = rounds[0];
  const last = rounds.at(-1);
  const result = {
    rates: { events_per_s: EVENT_RATE, sessions_per_s: SESSION_RATE, seconds: SECONDS, rounds: ROUNDS },
    host_work_ms: hostMs,
    per_item: perItem,
    rounds,
    recount: recounted,
    restart: readyAfter,
    /** the busiest round's use of the host (bench/lib.ts' hostPercent), of HOST_CPU: at NO_ROOM_FROM or more the latency target is not judged */
    host_room: { cpu_percent: HOST_CPU, busiest_round_percent: Math.max(0, ...rounds.map(hostPercent)), no_room_from: NO_ROOM_FROM },
    targets: {
      error_event_bytes_le_3072: perItem.error_event.bytes_per_item <= 3072,
      sign_in_attempt_bytes_le_400: perItem.sign_in_attempt.bytes_per_item <= 400,
      session_bytes_le_100: perItem.session.bytes_per_item <= 100,
      last_round_p99_within_1_5x_and_under_50ms: !!first && !!last && last.events_p99_ms <= 1.5 * first.events_p99_ms && last.events_p99_ms < 50,
      recount_peak_le_512mb: recounted.code === 0 && recounted.peak_rss_mb <= 512,
      restart_ready_le_15s: readyAfter.ready_seconds !== null && readyAfter.ready_seconds <= 15,
      volume_reached: !!last && last.stored.sessions >= 1_000_000 && last.stored.events >= 250_000,
    },
  };
  report('bench:growth', result, [
    ['host (baseline)', `a fixed piece of CPU work in ${hostMs} ms on the idle host (bench/lib.ts hostWorkMs)`],
    ...(
      [
        ['disk per sign-in attempt (B)', perItem.sign_in_attempt],
        ['disk per ~6 KB error event (B)', perItem.error_event],
        ['disk per session (B)', perItem.session],
      ] as const
    ).map(([name, item]): [string, string] => [
      name,
      item === NOT_MEASURED ? 'not measured (--calibrate 0)' : `${item.bytes_per_item} (SQLite ${item.sqlite_bytes_per_item}, AOF ${item.aof_bytes_per_item})`,
    ]),
    ...rounds.map(
      (r) =>
        [
          `round ${r.round}`,
          `events p99 ${r.events_p99_ms} ms, batches p99 ${r.session_batches_p99_ms} ms, non-2xx ${r.non_2xx}, CPU stolen ${r.cpu_steal_percent ?? '-'}%, CPU used (% of a core) ${Object.entries(r.cpu_percent).map(([role, p]) => `${role} ${p}`).join(', ')} = ${r.cpu_percent_sum} of ${HOST_CPU} (the host busy ${r.host_busy_percent ?? '-'}), settled ${r.settled_seconds} s; reads p99 list ${r.reads.issue_list.p99} / events ${r.reads.issue_events?.p99 ?? '-'} / releases ${r.reads.releases.p99} ms; ${r.stored.events} events, ${r.stored.sessions} sessions; ${r.events_collection_bytes_per_event} B/event, ${r.session_raw_bytes_per_session} B/session in MongoDB; Redis ${round(r.redis_used_memory_bytes / 1048576)} MB`,
        ] as [string, string],
    ),
    ['recount', `${recounted.seconds} s, peak ${recounted.peak_rss_mb} MB (exit ${recounted.code})`],
    ['restart', `stopped in ${readyAfter.stop_seconds} s, started and ready in ${readyAfter.ready_seconds ?? 'more than 120'} s`],
    ['host room', hostRoom(result.host_room)],
    ['targets', JSON.stringify(result.targets)],
  ]);
} finally {
  redis.disconnect();
  await env.close();
}
