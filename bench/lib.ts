/**
 * Shared parts of the benchmarks: a stack of its own (or given URLs), a bare
 * Node HTTP server as the same-run baseline, and the report (JSON plus a
 * table).
 *
 * Every run stops by itself: load runs for a fixed number of seconds, every
 * wait has a deadline, and every process started is stopped.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Queue } from 'bullmq';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../config/index.ts';
import { startFerret } from '../src/embedded/ferretdb.ts';
import { freePort, type ManagedProcess } from '../src/embedded/process.ts';
import { startRedis } from '../src/embedded/redis.ts';
import { startRedisCluster } from '../src/embedded/redis-cluster.ts';
import { makeLogger } from '../src/log.ts';
import { makeRuntime } from '../src/runtime.ts';
import { round } from './timed.ts';

export { round, timedInTurn } from './timed.ts';

const BIN = fileURLToPath(new URL('../bin/lookout.mjs', import.meta.url));
const COMPILED = fileURLToPath(new URL('../dist/server/lookout.mjs', import.meta.url));
const BUILD_SERVER = fileURLToPath(new URL('../scripts/build-server.mjs', import.meta.url));

/** How Lookout's processes run: compiled, as `npm start` and the image run it (the default), or from the sources under tsx. */
export type Build = 'compiled' | 'tsx';
const DEFAULT_BUILD: Build = process.env.BENCH_BUILD === 'tsx' ? 'tsx' : 'compiled';

let serverBuilt = false;

/** Node's arguments that start a Lookout command of `build` (the compiled one built first, once a run, when stale). */
export function entryOf(build: Build = DEFAULT_BUILD): string[] {
  if (build === 'tsx') return [BIN];
  if (!serverBuilt) {
    const built = spawnSync(process.execPath, [BUILD_SERVER, '--if-stale'], { stdio: 'inherit' });
    if (built.status !== 0) throw new Error('building the server failed');
    serverBuilt = true;
  }
  return ['--enable-source-maps', COMPILED];
}
const BARE = fileURLToPath(new URL('./bare-server.mjs', import.meta.url));

export interface BenchArgs {
  seconds: number;
  concurrency: number;
  workers: number;
  workerConcurrency: number;
  /** API processes (1 unless given); a load spreads its requests over them as a load balancer would */
  apis?: number;
  /** a local Redis Cluster (three primaries, a replica each: src/embedded/redis-cluster.ts) instead of one redis-server */
  redisCluster?: boolean;
  /** compiled (default; BENCH_BUILD=tsx for the sources under tsx) */
  build?: Build;
}

export interface Stack {
  redisUrl: string;
  mongoUrl: string;
  env: Record<string, string>;
  apiUrl: string;
  apiUrls: string[];
  /** where the stores it started keep their data (FerretDB's SQLite files, Redis' AOF) */
  dataDirs: { ferretdb: string; redis: string };
  /**
   * Stops every process it started, stores included, and starts them again on the same data and ports; resolves
   * when they are up, with how long the stop and the start took (ms).
   */
  restart(): Promise<{ stopMs: number; startMs: number }>;
  /** the processes it runs now, by role: `api`, `worker`, `redis`, `ferretdb` (stores it was given are not its own) */
  processes(): { role: string; pid: number }[];
  stop(): Promise<void>;
  /** when (performance.now()) the last API process started printed its "listening" line */
  listeningAt(): number;
  /** how long the last API process started took from its spawn to that line (ms) */
  apiStartMs(): number;
}

/** The stop of each stack running: a benchmark stopped by a signal stops them all, rather than leaving their stores and processes running. */
const live = new Set<() => Promise<void>>();
const interrupted = () => void Promise.allSettled([...live].map((stop) => stop())).finally(() => process.exit(130));
process.once('SIGINT', interrupted).once('SIGTERM', interrupted);

/**
 * Redis and FerretDB of its own in a temporary folder (or REDIS_URL and
 * MONGODB_URL when set), `apis` API processes (`lookout api`) and `workers`
 * worker processes; with `redisCluster`, a local Redis Cluster instead of
 * the one Redis.
 */
export async function startStack(args: BenchArgs, extraEnv: Record<string, string> = {}): Promise<Stack> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-bench-'));
  const dataDirs = { ferretdb: path.join(dir, 'ferretdb'), redis: path.join(dir, 'redis') };
  let started: ManagedProcess[] = [];
  let children: ChildProcess[] = [];
  const stopAll = async () => {
    await Promise.all(children.map((c) => stopChild(c)));
    await Promise.all(started.map((p) => p.stop()));
    children = [];
    started = [];
  };
  const stop = async () => {
    live.delete(stop);
    await stopAll();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  live.add(stop);
  try {
    const ports = { redis: await freePort(), ferret: await freePort(), apis: await Promise.all(Array.from({ length: args.apis ?? 1 }, () => freePort())) };
    let redisUrl = process.env.REDIS_URL ?? `redis://127.0.0.1:${ports.redis}`;
    let redisEnv: Record<string, string> = {};
    const mongoUrl = process.env.MONGODB_URL ?? `mongodb://127.0.0.1:${ports.ferret}/`;
    let clusterNodes: string | null = null;
    const startStores = async () => {
      if (args.redisCluster) {
        const cluster = await startRedisCluster({ dir: path.join(dir, 'redis-cluster') });
        started.push({ name: 'redis-cluster', url: '', pid: 0, stop: cluster.stop });
        clusterNodes = cluster.env;
      } else if (!process.env.REDIS_URL) {
        started.push(await startRedis({ dir: dataDirs.redis, port: ports.redis, pidFile: false }));
      }
      if (!process.env.MONGODB_URL) {
        const ferret = await startFerret({
          dir: dataDirs.ferretdb,
          port: ports.ferret,
          cacheDir: loadConfig({}).cacheDir,
          pidFile: false,
          // BENCH_FERRETDB_PPROF=127.0.0.1:6060: profile the store during a run (docs/performance.md)
          debugAddr: process.env.BENCH_FERRETDB_PPROF,
        });
        started.push(ferret);
      }
    };
    await startStores();
    if (clusterNodes) {
      redisUrl = `redis://${(clusterNodes as string).split(',')[0]}`;
      redisEnv = { REDIS_CLUSTER_NODES: clusterNodes };
    }
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...(args.redisCluster ? redisEnv : { REDIS_URL: redisUrl }),
      MONGODB_URL: mongoUrl,
      MONGODB_DB: `lookout_bench_${Date.now()}`,
      QUEUE_PREFIX: args.redisCluster ? `{bench${Date.now()}}` : `bench${Date.now()}`,
      LOG_LEVEL: 'warn',
      PORT: String(ports.apis[0]),
      // The bench drives one key far past spec 8's 3,000/min; the limiter still runs on every request.
      SESSIONS_RATE_LIMIT_PER_MINUTE: '100000000',
      KEY_CACHE_SECONDS: '5',
      ...extraEnv,
      ...(process.env.STORE_TRACE_DIR ? { STORE_TRACE_DIR: process.env.STORE_TRACE_DIR } : {}),
    };
    // the workers first: a load can then start within a moment of the API's "listening" line, as it would against
    // a fresh `npm start` (issue 66: no process is exempt from admission in its first seconds)
    let listeningAt = 0;
    let apiStartMs = 0;
    const startProcesses = async () => {
      children.push(...(await spawnWorkers(env, args.workers, args.workerConcurrency, args.build)));
      const entry = entryOf(args.build);
      for (const port of ports.apis) {
        const spawned = performance.now();
        children.push(await spawnReady([...entry, 'api'], { ...env, PORT: String(port) }, /API listening/));
        listeningAt = performance.now();
        apiStartMs = listeningAt - spawned;
      }
    };
    await startProcesses();
    const apiUrls = ports.apis.map((port) => `http://127.0.0.1:${port}`);
    const restart = async () => {
      if (args.redisCluster) throw new Error('restart: not with --redis-cluster');
      const stopping = performance.now();
      await stopAll();
      const starting = performance.now();
      await startStores();
      await startProcesses();
      return { stopMs: starting - stopping, startMs: performance.now() - starting };
    };
    const processes = () => [
      ...started.filter((p) => p.pid > 0).map((p) => ({ role: p.name, pid: p.pid })),
      ...children.map((c) => ({ role: c.spawnargs.includes('api') ? 'api' : 'worker', pid: c.pid! })),
    ];
    return { redisUrl, mongoUrl, env, apiUrl: apiUrls[0]!, apiUrls, dataDirs, restart, processes, stop, listeningAt: () => listeningAt, apiStartMs: () => apiStartMs };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** `count` worker processes (`lookout worker`) serving every queue, as `npm start`'s does, each at `concurrency`. */
export async function spawnWorkers(env: Record<string, string>, count: number, concurrency: number, build?: Build): Promise<ChildProcess[]> {
  const queues = 'sessions,events,notifications,maintenance';
  const entry = entryOf(build);
  return Promise.all(Array.from({ length: count }, () => spawnReady([...entry, 'worker', '--queues', queues, '--concurrency', String(concurrency)], { ...env, LOG_LEVEL: 'info' }, /workers started/)));
}

/** BENCH_NODE_ARGS (for example `--cpu-prof --cpu-prof-dir=/tmp/prof`) goes to every process a benchmark starts. */
const NODE_ARGS = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];

/** BENCH_LOG_DIR: each process a benchmark starts writes its output to `<dir>/<command>-<pid>.log` there. */
const LOG_DIR = process.env.BENCH_LOG_DIR;

function spawnReady(args: string[], env: Record<string, string>, ready: RegExp): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...NODE_ARGS, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (LOG_DIR) {
    fs.mkdirSync(LOG_DIR, { recursive: true });
    const command = args.find((a) => /^(api|worker)$/.test(a)) ?? path.basename(args.at(-1)!);
    const log = fs.createWriteStream(path.join(LOG_DIR, `${command}-${child.pid}.log`));
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
  }
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready after 120 s: ${output}`)), 120_000);
    let isReady = false;
    const onData = (d: Buffer) => {
      if (isReady) return; // keep draining the pipe, stop keeping the text
      output += d;
      if (ready.test(output)) {
        isReady = true;
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${output}`)));
  });
}

export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** The baseline: a bare Node HTTP server, in its own process, answering 202 to every POST (or refusing each with a 429). */
export async function startBareServer(answer: 'accept' | 'refuse' = 'accept'): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const child = await spawnReady([BARE, String(port), ...(answer === 'refuse' ? ['refuse'] : [])], { PATH: process.env.PATH ?? '' }, /listening/);
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => stopChild(child) };
}

/** The host's CPU time so far, from /proc/stat's first line (Linux; null elsewhere), in ticks. */
function cpuTicks(): { total: number; idle: number; softirq: number; steal: number } | null {
  try {
    // user nice system idle iowait irq softirq steal
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    return { total: f.slice(0, 8).reduce((a, b) => a + b, 0), idle: (f[3] ?? 0) + (f[4] ?? 0), softirq: f[6] ?? 0, steal: f[7] ?? 0 };
  } catch {
    return null; // not Linux
  }
}

/**
 * What the host did with its CPU time since `since`, in percent of HOST_CPU's scale (each core 100): busy (neither
 * idle nor stolen), of it softirq (the kernel's network work, which loopback traffic costs and no process is charged
 * for), and stolen by the hypervisor for other machines (a shared host that steals much makes every latency of that
 * span longer, whatever Lookout does). Null: not known.
 */
function hostTicks(since: ReturnType<typeof cpuTicks>): { busy: number; softirq: number; steal: number } | null {
  const now = cpuTicks();
  if (!since || !now || now.total === since.total) return null;
  const share = (ticks: number) => round((HOST_CPU * ticks) / (now.total - since.total), 0);
  const steal = now.steal - since.steal;
  return { busy: share(now.total - since.total - (now.idle - since.idle) - steal), softirq: share(now.softirq - since.softirq), steal: round((100 * steal) / (now.total - since.total), 1) };
}

/**
 * The host's CPU, each core 100%: a run that used 90% of it or more had no room (every process waits for a core, and a
 * latency says more of the host than of the build), and cannot judge a latency. Measured (docs/performance.md):
 * bench:growth rounds at 150–177% of a fast host ran the events' p99 at 22–104 ms, at 185–193% of a slow one 1.2–9 s.
 * What is used is the larger of the processes' sum and the host's busy time: in a storm the host was 91–100% busy
 * while the run's processes were charged 150–160% (the rest the kernel's network and disk work and short-lived tools
 * such as `ss`, charged to no process of the run), and the API's thread waited for a core 40–55% of the time (its
 * schedstat).
 */
export const HOST_CPU = os.availableParallelism() * 100;
export const NO_ROOM_FROM = 0.9 * HOST_CPU;

export interface HostUse {
  cpu_percent: Record<string, number>;
  cpu_percent_sum: number;
  /** the host's busy time (null: not known), of it softirq, on the same scale */
  host_busy_percent: number | null;
  host_softirq_percent: number | null;
  cpu_steal_percent: number | null;
  /** whether the larger of the processes' sum and the host's busy time stayed under NO_ROOM_FROM */
  room: boolean;
}

/** What the stack's processes and this one used of the host from now until the returned function is called. */
export function hostUse(stack: Pick<Stack, 'processes'>, more: () => Record<string, number> = () => ({})): () => HostUse {
  const ticks = cpuTicks();
  const cpu = processCpu(stack);
  return () => {
    const used = { ...cpu(), ...more() };
    const sum = Object.values(used).reduce((a, b) => a + b, 0);
    const host = hostTicks(ticks);
    return {
      cpu_percent: used,
      cpu_percent_sum: sum,
      host_busy_percent: host?.busy ?? null,
      host_softirq_percent: host?.softirq ?? null,
      cpu_steal_percent: host?.steal ?? null,
      room: hostPercent({ cpu_percent_sum: sum, host_busy_percent: host?.busy ?? null }) < NO_ROOM_FROM,
    };
  };
}

/** What a span used of the host: the larger of its processes' sum and the host's busy time (% of a core). */
export const hostPercent = (h: Pick<HostUse, 'cpu_percent_sum' | 'host_busy_percent'>): number => Math.max(h.cpu_percent_sum, h.host_busy_percent ?? 0);

export function hostUseWords(h: HostUse): string {
  const roles = Object.entries(h.cpu_percent).map(([role, n]) => `${role} ${n}`).join(', ');
  return `CPU used ${h.cpu_percent_sum}% of ${HOST_CPU} (${roles}), the host busy ${h.host_busy_percent ?? '-'}% (softirq ${h.host_softirq_percent ?? '-'}), stolen ${h.cpu_steal_percent ?? '-'}%: ${h.room ? 'room' : 'no room, latency not judged'}`;
}

/** CPU time (ms) each process has used so far, from /proc (Linux; null where it cannot be read). */
export function cpuMsOf(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in USER_HZ (100 on Linux)
  } catch {
    return null;
  }
}

/**
 * Starts counting the CPU the stack's processes and this one (the load generator, `bench`) use; the returned
 * function gives each role's share of one core since then, in percent (roles of several processes summed). Beside
 * the latencies it says whether the host had room: the two cores are 200%.
 */
function processCpu(stack: Pick<Stack, 'processes'>): () => Record<string, number> {
  const started = performance.now();
  const self = process.cpuUsage();
  const before = new Map(stack.processes().map((p) => [p.pid, cpuMsOf(p.pid)]));
  return () => {
    const seconds = (performance.now() - started) / 1000;
    const used: Record<string, number> = {};
    for (const p of stack.processes()) {
      const was = before.get(p.pid);
      const now = cpuMsOf(p.pid);
      if (was == null || now == null) continue;
      used[p.role] = (used[p.role] ?? 0) + (now - was);
    }
    const own = process.cpuUsage(self);
    used.bench = (own.user + own.system) / 1000;
    return Object.fromEntries(Object.entries(used).map(([role, ms]) => [role, round(ms / seconds / 10, 0)]));
  };
}

/**
 * How fast this host is, as a baseline beside the run's figures: milliseconds this process takes, on an idle host, for
 * a fixed piece of work shaped like Lookout's (JSON of 20,000 sessions with 32-hex sids, stringified, deflated and
 * parsed, 10 times over; the median of three tries). Hosts of this kind have differed by twice and more from one
 * session to the next: compare runs' latencies beside it.
 */
export function hostWorkMs(): number {
  const sessions = Array.from({ length: 20_000 }, (_, i) => ({ sid: crypto.createHash('md5').update(String(i)).digest('hex'), release: `app@${i % 3}`, status: 'ok', errors: i % 7, started: 1_800_000_000_000 + i }));
  const tries = [0, 1, 2].map(() => {
    const started = performance.now();
    for (let i = 0; i < 10; i++) JSON.parse(zlib.inflateRawSync(zlib.deflateRawSync(JSON.stringify(sessions))).toString('utf8'));
    return performance.now() - started;
  });
  return round(tries.sort((a, b) => a - b)[1]!, 0);
}

/** Polls `check` every 50 ms until it is true or `timeoutMs` passes; returns the seconds waited or null. */
export async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<number | null> {
  const start = performance.now();
  while (performance.now() - start < timeoutMs) {
    if (await check()) return round((performance.now() - start) / 1000);
    await new Promise((r) => setTimeout(r, 50));
  }
  return null;
}

/** Prints the result as one JSON document and as a table of rows. */
export function report(name: string, result: Record<string, unknown>, rows: [string, string | number | null][]): void {
  console.log(JSON.stringify({ bench: name, at: new Date().toISOString(), machine: { cpus: os.cpus().length, node: process.version }, ...result }, null, 2));
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log(`\n${name}`);
  for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v ?? 'n/a'}`);
}

/** Jobs of a queue not finished yet: waiting, active, delayed or prioritized. */
export async function pendingJobs(queue: Queue): Promise<number> {
  const c = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
  return (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0);
}

/**
 * A stack of its own with a runtime on the same stores, and one project whose
 * installation has activated (API processes cache the keys of bound projects,
 * as they would for a real installation).
 */
export async function openBench(args: BenchArgs, extraEnv: Record<string, string> = {}) {
  const stack = await startStack(args, extraEnv);
  const config = loadConfig(stack.env);
  const runtime = await makeRuntime(config, { redisUrl: stack.redisUrl, mongoUrl: stack.mongoUrl }, makeLogger('warn', 'bench'));
  const org = await runtime.admin.createOrg({ name: 'Bench', plan: 'business', seats: null });
  const project = await runtime.admin.createProject({ org: Number(org.id), name: 'bench', securityMonitoring: true });
  await runtime.sdk.activate((await runtime.stores.projects.get(Number(project.id)))!, { instance_id: BENCH_INSTANCE }, new Date());
  return {
    stack,
    config,
    runtime,
    project,
    async close() {
      await runtime.mongo.db.dropDatabase().catch(() => {});
      await runtime.close();
      await stack.stop();
    },
  };
}

export const BENCH_INSTANCE = 'bench-instance-0001';

/** Refusals by route and reason, as the API's /metrics counts them (lookout_ingest_refused_total). */
export async function refusalsByReason(apiUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${apiUrl}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const m of text.matchAll(/^lookout_ingest_refused_total\{([^}]*)\} (\d+)/gm)) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    const name = `${labels.route} ${labels.reason}`;
    counts[name] = (counts[name] ?? 0) + Number(m[2]);
  }
  return counts;
}

type BenchRuntime = Awaited<ReturnType<typeof openBench>>['runtime'];

/**
 * Waits until nothing more arrives and everything stored is applied (requests a client gave up on may still be
 * read and written a while after: they wait in the kernel's buffers); returns the seconds waited, or null.
 */
export async function settled(runtime: BenchRuntime, timeoutMs = 180_000): Promise<number | null> {
  let last = -1;
  return waitFor(async () => {
    const now = (await runtime.stores.events.collection.countDocuments({})) + (await runtime.stores.events.backlog.size()) * 1e9;
    const still = now === last;
    last = now;
    if (!still) await new Promise((r) => setTimeout(r, 2000));
    return still;
  }, timeoutMs);
}

/**
 * Whether every 2xx was stored and counted exactly once in its project's error issues: stored can exceed
 * acknowledged (a request the client gave up on may have been written all the same), never fall short of it,
 * and every stored error event is counted once.
 */
export async function countedOnce(runtime: BenchRuntime, project: number, acknowledged: number, say: (line: string) => void) {
  const stored = await runtime.stores.events.collection.countDocuments({ project_id: project, kind: 'error' });
  let counted = 0;
  const errorIssues = async () => (await runtime.stores.issues.ofProject(project)).filter((i) => i.kind === 'error');
  await waitFor(async () => {
    counted = (await errorIssues()).reduce((n, i) => n + i.event_count, 0);
    return counted === stored;
  }, 30_000);
  if (stored !== counted) {
    // which issues count other than their stored events
    for (const issue of await errorIssues()) {
      const own = await runtime.stores.events.collection.countDocuments({ project_id: project, fingerprint: issue.fingerprint });
      if (own !== issue.event_count) say(`project ${project}: issue ${issue._id} counts ${issue.event_count}, ${own} stored`);
    }
  }
  return { acknowledged, stored, counted_in_issues: counted, exact: stored >= acknowledged && stored === counted };
}
