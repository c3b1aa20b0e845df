/**
 * npm run bench:decisions -- [--decisions 10000] [--requests 500] [--bouncers 20]
 *
 * The decisions feed (issue 24) with many decisions in force. On a stack of
 * its own (Redis and FerretDB in a temporary folder, one `lookout api`), one
 * project gets `--decisions` active decisions through the real burst script
 * (apply-burst-3.lua, one security issue each), and once the worker's
 * flusher has copied those issues to MongoDB, an installation's
 * polls are timed over HTTP with its keys: a poll with no changes (`since`
 * the latest cursor), the full list (no `since`), and a poll after one
 * change. Beside them, in the same run: GET /healthz on the same API
 * process (no store) and the config poll (spec 4.2). Last, through the
 * real ingest path (the API and a worker process): 20 bursts of failed
 * sign-ins, each timed from its last attempt's 202 to the feed showing its
 * decision (polled every 20 ms).
 *
 * Then CrowdSec bouncers (issue 49), each with its own key: every bouncer's
 * first pull (`startup=true`, every decision in force), pulls without
 * changes (the bouncers in turn), and 20 more bursts, each timed from its
 * last 202 to one bouncer's pull holding its decision (pulled every 20 ms)
 * while the others pull every `--bouncer-every-ms` (10 s, as bouncers do).
 */
import crypto from 'node:crypto';
import { parseArgs } from 'node:util';
import { BENCH_INSTANCE, openBench, report, round, timedInTurn } from './lib.ts';

const { values } = parseArgs({
  options: { decisions: { type: 'string' }, requests: { type: 'string' }, bouncers: { type: 'string' }, 'bouncer-every-ms': { type: 'string' } },
  strict: true,
});
const BOUNCERS = Number(values.bouncers ?? 20);
const BOUNCER_EVERY_MS = Number(values['bouncer-every-ms'] ?? 10_000);
const DECISIONS = Number(values.decisions ?? 10_000);
const REQUESTS = Number(values.requests ?? 500);

const bench = await openBench({ seconds: 0, concurrency: 1, workers: 1, workerConcurrency: 4 });
const log = (what: string) => process.stderr.write(`bench:decisions ${new Date().toISOString()} ${what}\n`);

try {
  const project = Number(bench.project.id);
  const { burstsState, keeper } = bench.runtime;
  await keeper.verify(project, new Date());
  log(`making ${DECISIONS} decisions`);
  const now = Date.now();
  const { redis, keys } = bench.runtime.issuesState;
  for (let i = 0; i < DECISIONS; i += 200) {
    await Promise.all(
      Array.from({ length: Math.min(200, DECISIONS - i) }, (_, k) => {
        const n = i + k;
        const ip = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
        const burst = {
          fingerprint: `security:brute_force:bench${n}`,
          title: `burst ${n}`,
          detector: 'brute_force' as const,
          group: `bench${n}`,
          first_id: `f${n}`,
          last_id: `e${n}`,
          actor: `user${n}@bench.example`,
          ip,
          count: 5,
          first: new Date(now - 60_000),
          last: new Date(now),
          latest: `${project}:e${n}`,
          latest_at: new Date(now),
          received: new Date(now),
        };
        return burstsState.applyBurst(project, 1_000_000 + n, burst, { decisionSeconds: 3600, now: new Date(now) });
      }),
    );
  }
  // Each decision came with its security issue, which the worker's flusher copies to MongoDB a chunk at a time; the
  // polls are timed once it has caught up, as they would be when the decisions were made over hours.
  await bench.runtime.issuesState.pending.markDirty(project); // as the events job does after its bursts
  const made = performance.now();
  const dirty = () => redis.hlen(keys(project).edirty);
  for (let left = await dirty(), said = 0; left > 0; left = await dirty()) {
    if (performance.now() - said > 10_000) {
      said = performance.now();
      log(`the flusher has ${left} issues to copy`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const flushSeconds = (performance.now() - made) / 1000;
  log(`the flusher copied ${DECISIONS} issues in ${round(flushSeconds, 1)} s`);
  const headers = { 'X-Service-Key': bench.project.secret_key, 'X-Service-Instance': BENCH_INSTANCE };
  const get = async (path: string) => {
    const res = await fetch(`${bench.stack.apiUrl}${path}`, { headers });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text.slice(0, 200)}`);
    return JSON.parse(text) as { decisions?: unknown[]; cursor?: string };
  };
  const full = await get('/api/v1/sdk/decisions');
  if (full.decisions!.length !== DECISIONS) throw new Error(`expected ${DECISIONS} decisions, the feed has ${full.decisions!.length}`);

  const measure = (path: () => string, count = REQUESTS) => timedInTurn(count, () => get(path()));
  log('timing the polls');
  const healthz = await measure(() => '/healthz');
  const config = await measure(() => '/api/v1/sdk/config');
  const unchanged = await measure(() => `/api/v1/sdk/decisions?since=${full.cursor}`);
  const fullList = await measure(() => '/api/v1/sdk/decisions', 50);
  // One change at a time: a decision lifted, then the poll that sees it.
  const active = (await bench.runtime.decisions.list(project, new Date())).decisions;
  let cursor = (await get(`/api/v1/sdk/decisions?since=${full.cursor}`)).cursor!;
  const oneChange: number[] = [];
  for (let i = 0; i < 100; i++) {
    await bench.runtime.decisions.lift(project, active[i]!.id, new Date());
    const t = performance.now();
    cursor = (await get(`/api/v1/sdk/decisions?since=${cursor}`)).cursor!;
    oneChange.push(performance.now() - t);
  }
  oneChange.sort((a, b) => a - b);

  /** Five failed sign-ins of one actor from one address through the API; the time of the last one's 202. */
  const burst = async (who: { actor: string; ip: string }) => {
    for (let i = 0; i < 5; i++) {
      const body = JSON.stringify({
        event_id: crypto.randomBytes(16).toString('hex'),
        timestamp: new Date(Date.now() - 1000 + i).toISOString(),
        security: { kind: 'login_failed', ...who },
      });
      const res = await fetch(`${bench.stack.apiUrl}/api/v1/events`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
      if (res.status !== 202) throw new Error(`POST /api/v1/events: ${res.status} ${await res.text()}`);
    }
    return performance.now();
  };

  log('timing bursts from the 202 to the feed');
  const visible: number[] = [];
  for (let b = 0; b < 20; b++) {
    const who = { actor: `burst${b}@bench.example`, ip: `192.0.2.${b + 1}` };
    const t = await burst(who);
    for (;;) {
      const answer = (await get(`/api/v1/sdk/decisions?since=${cursor}`)) as { decisions: { actor?: string }[]; cursor: string };
      cursor = answer.cursor;
      if (answer.decisions.some((d) => d.actor === who.actor)) break;
      if (performance.now() - t > 30_000) throw new Error(`no decision for ${who.actor} after 30 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
    visible.push(performance.now() - t);
  }
  visible.sort((a, b) => a - b);

  log(`${BOUNCERS} bouncers`);
  const bouncers = await Promise.all(Array.from({ length: BOUNCERS }, (_, i) => bench.runtime.bouncers.add(project, `bench-${i}`)));
  const pull = async (key: string, startup: boolean) => {
    const res = await fetch(`${bench.stack.apiUrl}/v1/decisions/stream${startup ? '?startup=true' : ''}`, {
      headers: { 'X-Api-Key': key, 'User-Agent': 'bench-bouncer/1' },
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET /v1/decisions/stream: ${res.status} ${text.slice(0, 200)}`);
    return { bytes: text.length, body: JSON.parse(text) as { new: { value: string }[] | null; deleted: unknown[] | null } };
  };
  const startups: number[] = [];
  let startupBytes = 0;
  for (const b of bouncers) {
    const t = performance.now();
    const { bytes, body } = await pull(b.key, true);
    startups.push(performance.now() - t);
    startupBytes = bytes;
    if ((body.new?.length ?? 0) < DECISIONS - 200) throw new Error(`a bouncer's startup pull holds ${body.new?.length ?? 0} decisions`);
  }
  const firstStartup = startups[0]!;
  startups.sort((a, b) => a - b);
  const streamUnchanged = await timedInTurn(REQUESTS, (i) => pull(bouncers[i % BOUNCERS]!.key, false));
  // the other bouncers pull every BOUNCER_EVERY_MS while bursts are made and the first bouncer watches for them
  let polling = true;
  const background = bouncers.slice(1).map(async (b, i) => {
    await new Promise((r) => setTimeout(r, (i * BOUNCER_EVERY_MS) / BOUNCERS));
    while (polling) {
      await pull(b.key, false);
      await new Promise((r) => setTimeout(r, BOUNCER_EVERY_MS));
    }
  });
  const toBouncer: number[] = [];
  for (let b = 0; b < 20; b++) {
    const who = { actor: `edge${b}@bench.example`, ip: `198.51.100.${b + 1}` };
    const t = await burst(who);
    for (;;) {
      if ((await pull(bouncers[0]!.key, false)).body.new?.some((d) => d.value === who.ip)) break;
      if (performance.now() - t > 30_000) throw new Error(`no decision for ${who.ip} in a bouncer's pull after 30 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
    toBouncer.push(performance.now() - t);
  }
  polling = false;
  await Promise.all(background);
  toBouncer.sort((a, b) => a - b);

  const result = {
    decisions: DECISIONS,
    requests: REQUESTS,
    flusher_caught_up_s: round(flushSeconds, 1),
    healthz,
    config,
    poll_no_changes: unchanged,
    full_list: { ...fullList, bytes: JSON.stringify(full).length },
    poll_one_change: { p50: round(oneChange[49]!, 1), p99: round(oneChange[98]!, 1) },
    burst_to_feed_ms: { p50: round(visible[9]!, 0), max: round(visible.at(-1)!, 0) },
    bouncers: BOUNCERS,
    bouncer_startup_ms: { first: round(firstStartup, 1), p50: round(startups[Math.floor(startups.length / 2)]!, 1), max: round(startups.at(-1)!, 1), bytes: startupBytes },
    bouncer_pull_no_changes: streamUnchanged,
    burst_to_bouncer_ms: { p50: round(toBouncer[9]!, 0), max: round(toBouncer.at(-1)!, 0) },
    targets_met: unchanged.p99 < 10 && fullList.max < 200 && visible.at(-1)! < 2000,
    bouncer_targets_met: streamUnchanged.p99 < 10 && startups.at(-1)! < 1000 && toBouncer.at(-1)! < 2000,
  };
  report('bench:decisions', result, [
    [`read (ms, ${DECISIONS} decisions in force)`, 'p50 / p99'],
    [`the flusher caught up with their ${DECISIONS} issues`, `${result.flusher_caught_up_s} s after the last was made`],
    ['baseline: GET /healthz (no store)', `${healthz.p50} / ${healthz.p99}`],
    ['baseline: GET /api/v1/sdk/config', `${config.p50} / ${config.p99}`],
    ['poll, no changes (since = latest cursor)', `${unchanged.p50} / ${unchanged.p99}  (target p99 < 10 ms)`],
    ['poll after one change', `${result.poll_one_change.p50} / ${result.poll_one_change.p99}`],
    [`full list (${Math.round(result.full_list.bytes / 1024)} KiB)`, `${fullList.p50} / ${fullList.p99}, slowest ${fullList.max}  (target < 200 ms)`],
    [
      "a burst's last 202 to its decision on the feed (20 bursts)",
      `${result.burst_to_feed_ms.p50} / slowest ${result.burst_to_feed_ms.max}  (target < 2,000 ms)`,
    ],
    ['targets met', String(result.targets_met)],
    [`CrowdSec bouncers (${BOUNCERS}, the others pulling every ${BOUNCER_EVERY_MS / 1000} s)`, ''],
    [
      `first pull, startup=true (${Math.round(startupBytes / 1024)} KiB)`,
      `${result.bouncer_startup_ms.p50} / slowest ${result.bouncer_startup_ms.max}, the first ${result.bouncer_startup_ms.first}  (target < 1,000 ms)`,
    ],
    ['pull without changes', `${streamUnchanged.p50} / ${streamUnchanged.p99}  (target p99 < 10 ms)`],
    [
      "a burst's last 202 to its decision in a bouncer's pull (20 bursts)",
      `${result.burst_to_bouncer_ms.p50} / slowest ${result.burst_to_bouncer_ms.max}  (target < 2,000 ms)`,
    ],
    ['bouncer targets met', String(result.bouncer_targets_met)],
  ]);
} finally {
  await bench.close();
}
