/** Job name → handler. A handler is a plain function of its payload and the parts of the runtime it declares. */
import type { Job } from 'bullmq';
import type { JobName, JobPayloads } from '../src/queues/registry.ts';
import type { Runtime } from '../src/runtime.ts';
import { processEventGroups } from './events-process.handler.ts';
import { deliverNotification } from './notify-deliver.handler.ts';
import { repackAttempts, deleteRepackedSessions } from '../src/services/repack.service.ts';
import { runRetention } from './retention.handler.ts';
import { processSessionBatches } from './sessions-process.handler.ts';

/** `signal` aborts when the worker stops: a handler that rests between steps stops resting. */
export type Handler<N extends JobName> = (payload: JobPayloads[N], runtime: Runtime, job: Job, signal?: AbortSignal) => Promise<unknown>;
export type HandlerMap = { [N in JobName]: Handler<N> };

export const handlers: HandlerMap = {
  'events.process': (payload, runtime) => processEventGroups(payload, runtime, new Date()),
  'sessions.process': (payload, runtime) => processSessionBatches(payload, runtime, new Date()),
  'maintenance.retention': (_payload, runtime) => runRetention(runtime, new Date()),
  'maintenance.repack': async (_payload, runtime, _job, signal) => {
    const [attempts, sessions] = await Promise.all([
      repackAttempts({ stores: runtime.stores, issuesState: runtime.issuesState, log: runtime.log }, new Date(), { signal }),
      deleteRepackedSessions({ stores: runtime.stores, state: runtime.sessionState, log: runtime.log }, new Date(), { signal }),
    ]);
    return { attempts, sessions };
  },
  'notify.deliver': (payload, runtime, job) => deliverNotification(payload, runtime, job),
};
