/**
 * One scrape for the whole fleet. Every API and worker process writes its
 * metrics (prom-client JSON) to Redis every few seconds under a key that
 * expires; `GET /metrics` on any API process merges the live ones, each
 * series labelled with its `process`, and adds the gauges that describe
 * shared state (queue depth, the oldest unprocessed raw entry, store
 * reachability), read at scrape time. Behind a load balancer, whichever API
 * answers gives the same picture; a process that stops drops out after
 * STALE_MS.
 */
import os from 'node:os';
import type { RedisClient } from '../redis/connect.ts';
import { AggregatorRegistry, Gauge, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { QUEUE_NAMES } from '../../config/index.ts';
import type { Runtime } from '../runtime.ts';
import { redisMemory } from '../redis/memory.ts';
import { deadline } from '../util/deadline.ts';

const PUBLISH_EVERY_MS = 5000;
const STALE_MS = 3 * PUBLISH_EVERY_MS;
/** A scrape never waits longer than this on a store. */
const SCRAPE_TIMEOUT_MS = 2000;
const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'] as const;

type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

export function processId(role: string): string {
  return `${role}-${os.hostname()}-${process.pid}`;
}

function keys(prefix: string) {
  return { index: `${prefix}:metrics:processes`, of: (id: string) => `${prefix}:metrics:process:${id}` };
}

function labelled(metrics: MetricsJson, process: string): MetricsJson {
  return metrics.map((m) => ({ ...m, values: m.values.map((v) => ({ ...v, labels: { ...v.labels, process } })) }));
}

/** Publishes this process's metrics until `stop`; a failed write (Redis down) is retried at the next tick. */
export function publishMetrics(runtime: Runtime, role: string): { id: string; stop(): Promise<void> } {
  const id = processId(role);
  const redis = runtime.queues.connection;
  const k = keys(runtime.config.queuePrefix);
  const publish = async () => {
    const json = JSON.stringify(await runtime.metrics.registry.getMetricsAsJSON());
    const now = Date.now();
    await redis.multi().set(k.of(id), json, 'PX', STALE_MS).zadd(k.index, now, id).zremrangebyscore(k.index, 0, now - 4 * STALE_MS).exec();
  };
  const tick = () => void publish().catch(() => {});
  tick();
  const timer = setInterval(tick, PUBLISH_EVERY_MS);
  timer.unref();
  return {
    id,
    async stop() {
      clearInterval(timer);
      // The last figures stay visible until they expire, so a scrape still sees the final counts.
      await publish().catch(() => {});
    },
  };
}

async function fleetJson(runtime: Runtime, selfId: string): Promise<MetricsJson[]> {
  const redis: RedisClient = runtime.queues.connection;
  const k = keys(runtime.config.queuePrefix);
  const own = labelled(await runtime.metrics.registry.getMetricsAsJSON(), selfId);
  try {
    const ids = (await deadline(redis.zrangebyscore(k.index, Date.now() - STALE_MS, '+inf'), SCRAPE_TIMEOUT_MS, 'metrics index')).filter((id) => id !== selfId);
    if (ids.length === 0) return [own];
    const stored = await deadline(redis.mget(ids.map(k.of)), SCRAPE_TIMEOUT_MS, 'metrics read');
    const others = stored.flatMap((text, i) => (text ? [labelled(JSON.parse(text) as MetricsJson, ids[i]!)] : []));
    return [own, ...others];
  } catch {
    return [own]; // Redis is down: this process's own figures are still worth a scrape
  }
}

/**
 * Gauges of shared state, read from Redis and MongoDB at each scrape.
 * `refresh` runs the reads first, so each gauge and `lookout_store_up`
 * describe the same moment.
 */
function makeSharedGauges(runtime: Runtime) {
  const registry = new Registry();
  const registers = [registry];
  const up = new Gauge({ name: 'lookout_store_up', help: 'Whether the store answered at this scrape (1) or not (0)', labelNames: ['store'] as const, registers });
  const jobs = new Gauge({ name: 'lookout_queue_jobs', help: 'Jobs in each queue by state', labelNames: ['queue', 'state'] as const, registers });
  const oldest = new Gauge({
    name: 'lookout_oldest_unprocessed_seconds',
    help: 'Age of the oldest raw entry stored and not yet processed by a worker (0: none waits)',
    labelNames: ['kind'] as const,
    registers,
  });
  const memory = new Gauge({ name: 'lookout_redis_memory_bytes', help: "Redis memory summed over its primaries: used, and maxmemory (0: no limit)", labelNames: ['kind'] as const, registers });
  const full = new Gauge({ name: 'lookout_redis_full', help: 'Whether a Redis primary is at its maxmemory and refuses writes (1): processing waits, ingestion is still acknowledged', registers });
  const readMemory = async () => {
    const m = await deadline(redisMemory(runtime.sessionState.redis), SCRAPE_TIMEOUT_MS, 'Redis memory');
    memory.set({ kind: 'used' }, m.used);
    memory.set({ kind: 'max' }, m.max);
    full.set(m.full ? 1 : 0);
  };
  const readQueues = async () => {
    for (const queue of QUEUE_NAMES) {
      const counts = await deadline(runtime.queues.queue(queue).getJobCounts(...JOB_STATES), SCRAPE_TIMEOUT_MS, 'job counts');
      for (const state of JOB_STATES) jobs.set({ queue, state }, counts[state] ?? 0);
    }
  };
  const readBacklog = async () => {
    const since = {
      event: await deadline(runtime.stores.events.backlog.oldest(), SCRAPE_TIMEOUT_MS, 'oldest event'),
      session: await deadline(runtime.stores.sessions.backlog.oldest(), SCRAPE_TIMEOUT_MS, 'oldest session batch'),
    };
    for (const [kind, at] of Object.entries(since)) oldest.set({ kind }, at ? Math.max(0, (Date.now() - at.getTime()) / 1000) : 0);
  };
  return {
    registry,
    async refresh() {
      jobs.reset();
      oldest.reset();
      memory.reset();
      const [redis, mongodb] = await Promise.allSettled([readQueues(), readBacklog(), readMemory()]);
      up.set({ store: 'redis' }, redis.status === 'fulfilled' ? 1 : 0);
      up.set({ store: 'mongodb' }, mongodb.status === 'fulfilled' ? 1 : 0);
    },
  };
}

/** The Prometheus text of `GET /metrics`. */
export function makeFleetScrape(runtime: Runtime, selfId: string) {
  const shared = makeSharedGauges(runtime);
  return {
    contentType: shared.registry.contentType,
    async text(): Promise<string> {
      await shared.refresh();
      const processes = AggregatorRegistry.aggregate(await fleetJson(runtime, selfId));
      return `${await processes.metrics()}\n${await shared.registry.metrics()}`;
    },
  };
}
