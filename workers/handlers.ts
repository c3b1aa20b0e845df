/**
 * Job name → handler: each job's module (src/queues/jobs/) is given the parts of the runtime it declares. A handler
 * is a plain function of its payload and those parts.
 */
import type { Job } from 'bullmq';
import { processEventGroups } from '../src/queues/jobs/events-process.ts';
import { runRepack } from '../src/queues/jobs/maintenance-repack.ts';
import { runRetention } from '../src/queues/jobs/maintenance-retention.ts';
import { deliverNotification } from '../src/queues/jobs/notify-deliver.ts';
import { processSessionBatches } from '../src/queues/jobs/sessions-process.ts';
import type { JobName, JobPayloads } from '../src/queues/registry.ts';
import type { Runtime } from '../src/runtime.ts';

/** `signal` aborts when the worker stops: a handler that rests between steps stops resting. */
export type Handler<N extends JobName> = (payload: JobPayloads[N], runtime: Runtime, job: Job, signal?: AbortSignal) => Promise<unknown>;
export type HandlerMap = { [N in JobName]: Handler<N> };

export const handlers: HandlerMap = {
  'events.process': (payload, runtime) => processEventGroups(payload, runtime, new Date()),
  'sessions.process': (payload, runtime) => processSessionBatches(payload, runtime, new Date()),
  'maintenance.retention': (_payload, runtime) => runRetention(runtime, new Date()),
  'maintenance.repack': (_payload, runtime, _job, signal) => runRepack(runtime, new Date(), signal),
  'notify.deliver': (payload, runtime, job) => deliverNotification(payload, runtime, job),
  'sourcemaps.remap': (payload, runtime) => runtime.symbolication.remap(payload.project),
};
