/**
 * The worker pool: one BullMQ Worker per queue served, each job run by its handler with the job's duration and
 * failures counted. A handler missing for a job's name fails that job for good (UnrecoverableError).
 */
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Config, QueueKey } from '../../config/index.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { makeFullRedisLog } from '../redis/memory.ts';
import { redisConnection, type JobName } from './registry.ts';
import type { RedisTarget } from '../redis/connect.ts';

/** Runs one job: its payload, the job, and a signal that aborts when the worker stops. */
export type RunJob = (name: JobName, payload: unknown, job: Job, signal?: AbortSignal) => Promise<unknown> | undefined;

export interface PoolOptions {
  queues: readonly QueueKey[];
  /** per queue, unless one is given for all */
  concurrency?: number;
  config: Pick<Config, 'queuePrefix' | 'concurrency' | 'jobLockMs'>;
  redisTarget: RedisTarget;
  log: Logger;
  metrics: Metrics;
}

export function startPool(run: RunJob, opts: PoolOptions) {
  const { config, log, metrics } = opts;
  const connection = redisConnection(opts.redisTarget);
  const full = makeFullRedisLog(log);
  const workers = opts.queues.map((queue) => {
    const worker = new Worker(
      queue,
      async (job, _token, signal) => {
        const labels = { queue, job: job.name };
        const stop = metrics.jobDuration.startTimer(labels);
        try {
          const running = run(job.name as JobName, job.data, job, signal);
          if (!running) throw new UnrecoverableError(`no handler for job ${job.name}`);
          const result = await running;
          stop({ outcome: 'completed' });
          return result;
        } catch (err) {
          stop({ outcome: 'failed' });
          metrics.jobFailures.inc(labels);
          throw err;
        }
      },
      {
        connection,
        prefix: config.queuePrefix,
        concurrency: opts.concurrency ?? config.concurrency[queue],
        // A job whose worker died is found stalled and retried after about this long.
        lockDuration: config.jobLockMs,
        stalledInterval: config.jobLockMs,
        autorun: true,
      },
    );
    worker.on('failed', (job, err) => {
      full(err, queue);
      log.warn({ queue, job: job?.name, id: job?.id, attempts: job?.attemptsMade, err: err.message }, 'job failed');
    });
    worker.on('error', (err) => {
      full(err, queue);
      log.error({ queue, err: err.message }, 'worker error');
    });
    return worker;
  });
  return {
    workers,
    /** Stops fetching and lets running jobs finish within `timeoutMs`; a job cut off then is retried elsewhere. */
    async close(timeoutMs: number) {
      for (const worker of workers) worker.cancelAllJobs('the worker is stopping'); // a job resting between steps (the repacker) stops resting
      const closing = Promise.all(workers.map((w) => w.close()));
      const deadline = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), timeoutMs).unref());
      if ((await Promise.race([closing, deadline])) === 'timeout') {
        log.warn({ timeoutMs }, 'jobs still running at the shutdown deadline; they will be retried');
        await Promise.all(workers.map((w) => w.close(true)));
      }
      connection.disconnect();
    },
  };
}
