/**
 * The sweep behind "nothing acknowledged is lost": documents stored more
 * than `graceMs` ago and still unprocessed are enqueued again. That covers
 * an enqueue that failed (Redis down) and a job lost with Redis' data.
 * Re-adding a job that still exists is a no-op (same job id) and processing
 * is idempotent, so sweeping too much is harmless.
 */
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { JobName, JobPayloads, Queues } from './registry.ts';

export interface SweepSource<N extends JobName> {
  job: N;
  unprocessed(olderThan: Date, limit: number): Promise<{ _id: string }[]>;
  /** the job id the API gave the entry's job */
  jobId(id: string): string;
  /** the job for these entries (`perJob` at most) */
  payload(ids: string[]): JobPayloads[N];
  /** entries per job (default 1): more where the worker finds several in one read */
  perJob?: number;
}

export const SWEEP_GRACE_MS = 30_000;

/**
 * A swept entry gets a job id of its own, new once per slot: the job the API
 * added may still exist in BullMQ (failed for good, or completed on a Redis
 * state lost since), and adding a job under an existing id does nothing.
 */
const SWEEP_JOB_SLOT_MS = 5 * 60_000;

export function makeSweep<N extends JobName>(queues: Queues, source: SweepSource<N>) {
  return async (now: Date, graceMs = SWEEP_GRACE_MS, batch = 500): Promise<number> => {
    // Behind a backlog, an entry is late, not lost: its job is among those still waiting. Jobs are taken oldest
    // first, so only an entry stored a grace before the oldest waiting job can have lost its job. Sweeping the late
    // ones too doubled the work when it was already behind, and a swept job reads its entries back (on FerretDB v1
    // a scan of the events collection): measured, a backlog then grew until nothing settled (bench:growth).
    const oldest = await queues.oldestWaiting(source.job);
    const before = Math.min(now.getTime(), oldest?.getTime() ?? Infinity) - graceMs;
    const stale = await source.unprocessed(new Date(before), batch);
    if (stale.length === 0) return 0;
    const slot = Math.floor(now.getTime() / SWEEP_JOB_SLOT_MS);
    const perJob = source.perJob ?? 1;
    const jobs = [];
    for (let i = 0; i < stale.length; i += perJob) {
      const ids = stale.slice(i, i + perJob).map((d) => d._id);
      jobs.push({ payload: source.payload(ids), jobId: `${source.jobId(ids[0]!)}-sweep-${slot}` });
    }
    await queues.enqueueBulk(source.job, jobs);
    return stale.length;
  };
}

const SWEEP_INTERVAL_MS = 2000;

/** Every two seconds, each sweep in turn (a worker process runs one sweeper); a failed sweep is logged and tried again. */
export function startSweeper(deps: { sweeps: Record<string, (now: Date, graceMs: number) => Promise<number>>; graceMs: number; log: Logger; metrics: Metrics }) {
  const { log, metrics } = deps;
  const timer = setInterval(() => {
    for (const [what, sweep] of Object.entries(deps.sweeps)) {
      sweep(new Date(), deps.graceMs)
        .then((n) => {
          if (n === 0) return;
          metrics.sweeperRequeued.inc({ kind: what }, n);
          log.info({ requeued: n, what }, 'sweeper enqueued stored work');
        })
        .catch((err: Error) => log.warn({ err: err.message, what }, 'sweep failed; will retry'));
    }
  }, SWEEP_INTERVAL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
