/**
 * Job name → handler: each job's handler (workers/digest/, src/notify/deliver.ts) is given the parts of the runtime it declares. A handler
 * is a plain function of its payload and those parts.
 */
import type { Job } from 'bullmq';
import { deliverNotification } from '../src/notify/deliver.ts';
import { processCheckIns } from './digest/checkins.ts';
import { processEventGroups } from './digest/events.ts';
import { runRepack, runRetention } from './digest/maintenance.ts';
import { backupRunning } from '../src/backup/backup.ts';
import { runScheduledBackup } from './digest/backups.ts';
import { processSessionBatches } from './digest/sessions.ts';
import { processTraceGroups } from './digest/traces.ts';
import type { JobName, JobPayloads } from '../src/queues/registry.ts';
import type { Runtime } from '../src/runtime.ts';

/** `signal` aborts when the worker stops: a handler that rests between steps stops resting. */
export type Handler<N extends JobName> = (payload: JobPayloads[N], runtime: Runtime, job: Job, signal?: AbortSignal) => Promise<unknown>;
export type HandlerMap = { [N in JobName]: Handler<N> };

/** Jobs that delete or move documents hold off while a backup reads the store (src/backup/backup.ts). */
async function unlessBackingUp(runtime: Runtime, run: () => Promise<unknown>): Promise<unknown> {
  return (await backupRunning(runtime.redis, runtime.config.queuePrefix)) ? { held: 'backup' } : run();
}

/**
 * `signal`, also aborted once a backup begins: a repack spread over half a minute then does the rest of its run at
 * once, and the backup, which waits for it, starts within a second or so rather than up to half a minute later.
 */
async function untilBackup<T>(runtime: Runtime, signal: AbortSignal | undefined, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const stop = new AbortController();
  const onStop = () => stop.abort();
  signal?.addEventListener('abort', onStop);
  const watch = setInterval(() => {
    void backupRunning(runtime.redis, runtime.config.queuePrefix).then((running) => running && stop.abort(), () => {});
  }, 250);
  try {
    return await run(stop.signal);
  } finally {
    clearInterval(watch);
    signal?.removeEventListener('abort', onStop);
  }
}

export const handlers: HandlerMap = {
  'events.process': (payload, runtime) => processEventGroups(payload, runtime, new Date()),
  'sessions.process': (payload, runtime) => processSessionBatches(payload, runtime, new Date()),
  'checkins.process': (payload, runtime) => processCheckIns(payload, runtime, new Date()),
  'traces.process': (payload, runtime) => processTraceGroups(payload, runtime, new Date()),
  'maintenance.retention': (_payload, runtime) => unlessBackingUp(runtime, () => runRetention(runtime, new Date())),
  'maintenance.repack': (_payload, runtime, _job, signal) => unlessBackingUp(runtime, () => untilBackup(runtime, signal, (stop) => runRepack(runtime, new Date(), stop))),
  'maintenance.backup': (_payload, runtime) => runScheduledBackup(runtime, new Date()),
  'notify.deliver': (payload, runtime, job) => deliverNotification(payload, runtime, job),
  'sourcemaps.remap': (payload, runtime) => runtime.symbolication.remap(payload.project),
};
