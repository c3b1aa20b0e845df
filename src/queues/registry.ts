/**
 * The one typed job registry: each job name maps to its queue and options.
 * Jobs are enqueued only through `makeQueues().enqueue`, and workers check at
 * start that every job has exactly one handler.
 */
import { Queue, type JobsOptions } from 'bullmq';
import type { QueueKey } from '../../config/index.ts';
import type { CheckInsProcessPayload } from './jobs/checkins.job.ts';
import type { EventsProcessPayload } from './jobs/events.job.ts';
import type { NotifyDeliverPayload } from './jobs/notify-deliver.job.ts';
import type { SessionsProcessPayload } from './jobs/sessions.job.ts';
import type { TracesProcessPayload } from './jobs/traces.job.ts';
import { connectRedis, type RedisClient, type RedisTarget } from '../redis/connect.ts';
import { deadline } from '../util/deadline.ts';

/** Payload of each job, by name. */
export interface JobPayloads {
  /** apply groups of events to the issues in Redis; the API's jobs carry the events, the sweeper's only each group's id */
  'events.process': EventsProcessPayload;
  /** apply raw session batches to the Redis state; the API's jobs carry the batches, the sweeper's only their ids */
  'sessions.process': SessionsProcessPayload;
  /** apply groups of cron monitors' check-ins to the monitors' state; the sweeper's jobs carry only each group's id */
  'checkins.process': CheckInsProcessPayload;
  /** count groups of transactions and log lines into the performance aggregates, keep their samples and lines */
  'traces.process': TracesProcessPayload;
  /** delete sessions and raw entries past retention (scheduled) */
  'maintenance.retention': Record<string, never>;
  /** rewrite the sign-in attempts of past minutes in large parts (scheduled, src/services/repack.service.ts) */
  'maintenance.repack': Record<string, never>;
  'maintenance.backup': Record<string, never>;
  /** send one notification (a trigger's, a test) or a channel's digest, under its delivery id (src/notify/) */
  'notify.deliver': NotifyDeliverPayload;
  /** map a project's recent events that found no source map again, a bundle having arrived (src/services/symbolication.ts) */
  'sourcemaps.remap': { project: number };
}
export type JobName = keyof JobPayloads;

/** Attempts of a notification before it is marked failed. */
const NOTIFY_ATTEMPTS = 13;

/**
 * Processing jobs carry their batch (up to 2,000 sessions or 1,000 events), which MongoDB holds anyway: the
 * latest 100 completed are kept for the queue dashboard; 1,000 took up to ~300 MB of Redis at 5,000 sessions/s.
 */
const RETRY: JobsOptions = {
  attempts: 10,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { count: 100 },
  removeOnFail: { count: 10_000 },
};

export const JOBS: { readonly [N in JobName]: { queue: QueueKey; opts: JobsOptions } } = {
  'events.process': { queue: 'events', opts: RETRY },
  'sessions.process': { queue: 'sessions', opts: RETRY },
  'checkins.process': { queue: 'events', opts: RETRY },
  'traces.process': { queue: 'events', opts: RETRY },
  // Backoff from 1 s doubling, 13 attempts: the last is tried about 2 h 15 min after the first.
  // Finished jobs stay a day, so a delivery id dispatched again within it is not taken twice.
  'notify.deliver': {
    queue: 'notifications',
    opts: { attempts: NOTIFY_ATTEMPTS, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: { age: 86_400 }, removeOnFail: { age: 7 * 86_400 } },
  },
  'maintenance.retention': { queue: 'maintenance', opts: { attempts: 3, backoff: { type: 'exponential', delay: 5000 }, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } } },
  'maintenance.repack': { queue: 'maintenance', opts: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } } },
  // a failed backup is notified, not retried: the next one is due at its time
  'maintenance.backup': { queue: 'maintenance', opts: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } } },
  'sourcemaps.remap': { queue: 'maintenance', opts: { attempts: 3, backoff: { type: 'exponential', delay: 2000 }, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } } },
};

export function redisConnection(target: RedisTarget): RedisClient {
  // BullMQ needs maxRetriesPerRequest null on connections that block (workers).
  return connectRedis(target, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false });
}

/**
 * Producer side. Its connection fails fast instead of queueing commands while
 * Redis is down: the caller has already stored the data durably, marks it
 * unqueued, and the sweeper enqueues it later.
 */
/** How long the API waits for Redis to take a job before leaving it to the sweeper. */
const ENQUEUE_TIMEOUT_MS = 2000;

export function makeQueues(target: RedisTarget, prefix: string) {
  const connection = connectRedis(target, { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000 });
  connection.on('error', () => {}); // reported through the failing enqueue; reconnects by itself
  const queues = new Map<QueueKey, Queue>();
  const queue = (key: QueueKey): Queue => {
    let found = queues.get(key);
    if (!found) {
      found = new Queue(key, { connection, prefix });
      found.on('error', () => {}); // a failing enqueue reports it; the connection reconnects by itself
      queues.set(key, found);
    }
    return found;
  };
  return {
    connection,
    queue,
    async enqueue<N extends JobName>(name: N, payload: JobPayloads[N], jobId?: string) {
      const def = JOBS[name];
      return deadline(queue(def.queue).add(name, payload, { ...def.opts, ...(jobId ? { jobId } : {}) }), ENQUEUE_TIMEOUT_MS, 'enqueue');
    },
    async enqueueBulk<N extends JobName>(name: N, items: { payload: JobPayloads[N]; jobId?: string; delay?: number }[]) {
      const def = JOBS[name];
      return deadline(
        queue(def.queue).addBulk(
          items.map((item) => ({
            name,
            data: item.payload,
            opts: { ...def.opts, ...(item.jobId ? { jobId: item.jobId } : {}), ...(item.delay ? { delay: item.delay } : {}) },
          })),
        ),
        ENQUEUE_TIMEOUT_MS * 5,
        'bulk enqueue',
      );
    },
    /** When the oldest job still waiting for a worker in the job's queue was added (null: none waits). */
    async oldestWaiting(name: JobName): Promise<Date | null> {
      // Its id and its `timestamp` field only: a processing job carries its whole batch, and this runs every sweep.
      const q = queue(JOBS[name].queue);
      const [id] = await deadline(q.getRanges(['wait', 'prioritized'], 0, 0, true), ENQUEUE_TIMEOUT_MS, 'oldest waiting job');
      const added = id ? await connection.hget(q.toKey(id), 'timestamp') : null;
      return added ? new Date(Number(added)) : null;
    },
    /** A repeating job (BullMQ job scheduler); upserting the same id again only updates it. */
    async schedule<N extends JobName>(name: N, payload: JobPayloads[N], everyMs: number) {
      const def = JOBS[name];
      const { attempts, backoff, removeOnComplete, removeOnFail } = def.opts;
      return deadline(
        queue(def.queue).upsertJobScheduler(name, { every: everyMs }, { name, data: payload, opts: { attempts, backoff, removeOnComplete, removeOnFail } }),
        ENQUEUE_TIMEOUT_MS,
        'schedule',
      );
    },
    async close() {
      await deadline(Promise.all([...queues.values()].map((q) => q.close())), ENQUEUE_TIMEOUT_MS, 'queue close').catch(() => {});
      connection.disconnect();
    },
  };
}
export type Queues = ReturnType<typeof makeQueues>;
