/**
 * A worker process, assembled: the pool of BullMQ Workers running each job's handler (src/queues/pool.ts), the
 * sweeper, the maintenance schedule, the flusher with its notification hook, the dispatcher and the metrics. On
 * SIGTERM it stops fetching, lets running jobs finish within SHUTDOWN_TIMEOUT_MS, then exits; a job cut off by the
 * deadline is retried by another worker (BullMQ's stalled check).
 */
import { makeMonitorClock } from './monitor-clock.ts';
import { QUEUE_NAMES, type Config, type QueueKey } from '../config/index.ts';
import { parseOptions, UsageError } from '../src/cli/usage.ts';
import { storeUrls } from '../src/embedded/stores.ts';
import { makeLogger } from '../src/log.ts';
import { publishMetrics } from '../src/metrics/fleet.ts';
import { JOBS, type JobName, type JobPayloads } from '../src/queues/registry.ts';
import { startPool } from '../src/queues/pool.ts';
import { makeRuntime, type Runtime } from '../src/runtime.ts';
import { onStopSignal } from '../src/signals.ts';
import { makeDispatcher } from '../src/notify/dispatcher.ts';
import { startPerfAlerts } from '../src/notify/perf-alerts.ts';
import { makeFlusher } from '../src/state/flusher.ts';
import { checkCrashFree } from '../src/notify/rules.ts';
import { handlers, type Handler, type HandlerMap } from './handlers.ts';
import { startSweeper } from '../src/queues/sweep.ts';
import { lowerPriority } from '../src/util/priority.ts';

const RETENTION_EVERY_MS = 3600_000;
/** How often the repacker looks for minutes of sign-in attempts to rewrite (src/services/repack.service.ts). */
const REPACK_EVERY_MS = 15_000;

/** Start-up fails when a job has no handler or a handler has no job. */
export function checkHandlers(map: HandlerMap): void {
  const jobs = Object.keys(JOBS).sort();
  const handled = Object.keys(map).sort();
  const missing = jobs.filter((j) => !handled.includes(j));
  const orphan = handled.filter((h) => !jobs.includes(h));
  if (missing.length || orphan.length) {
    throw new Error(`job registry and handlers disagree: no handler for [${missing}], no job for [${orphan}]`);
  }
}

export async function startWorkers(runtime: Runtime, opts: { queues: readonly QueueKey[]; concurrency?: number }) {
  checkHandlers(handlers);
  const { config, log, metrics } = runtime;
  const pool = startPool(
    (name, payload, job, signal) => (handlers[name] as Handler<JobName> | undefined)?.(payload as JobPayloads[JobName], runtime, job, signal),
    { queues: opts.queues, concurrency: opts.concurrency, config, redisTarget: runtime.redisTarget, log, metrics },
  );
  // The sweeper enqueues what the API stored while Redis was unavailable (src/queues/sweep.ts).
  const sweeper = startSweeper({ sweeps: { event: runtime.events.sweep, session: runtime.sessions.sweep, check_in: runtime.checkIns.sweep, trace: runtime.traces.sweep }, graceMs: config.sweepGraceMs, log, metrics });
  if (opts.queues.includes('maintenance')) {
    for (const [job, everyMs] of [
      ['maintenance.retention', RETENTION_EVERY_MS],
      ['maintenance.repack', REPACK_EVERY_MS],
      // scheduled backups, when set (BACKUP_EVERY_HOURS)
      ...(config.backups.everyMs > 0 ? [['maintenance.backup', config.backups.everyMs] as const] : []),
    ] as const) {
      await runtime.queues
        .schedule(job, {}, everyMs)
        .catch((err: Error) => log.warn({ err: err.message, job }, 'could not schedule a maintenance job; the next worker start will'));
    }
  }
  // The flusher copies changed rollups and issues to MongoDB (src/state/flusher.ts).
  const flusher =
    opts.queues.includes('sessions') || opts.queues.includes('events')
      ? makeFlusher({
          state: runtime.sessionState,
          issuesState: runtime.issuesState,
          keeper: runtime.keeper,
          // the crash-free notification rules, on the hour's rollups as written
          async onRollupsWritten(project, rollups) {
            if (await checkCrashFree(runtime.notify, project, await runtime.channels(project), rollups, new Date())) await runtime.notify.markProject(project);
          },
          store: runtime.stores.sessions,
          issuesStore: runtime.stores.issues,
          eventsStore: runtime.stores.events,
          log,
          metrics,
          intervalMs: config.flushIntervalMs,
        })
      : null;
  flusher?.start();
  // The dispatcher turns the triggers in the projects' outboxes into deliveries (src/notify/dispatcher.ts).
  const dispatcher = opts.queues.includes('notifications')
    ? makeDispatcher({
        notify: runtime.notify,
        issuesState: runtime.issuesState,
        channels: runtime.channels,
        projects: runtime.stores.projects,
        queues: runtime.queues,
        log,
        publicUrl: config.publicUrl,
        intervalMs: config.flushIntervalMs,
      })
    : null;
  dispatcher?.start();
  // The performance rules, once a minute (src/notify/perf-alerts.ts).
  const perfAlerts = opts.queues.includes('notifications')
    ? startPerfAlerts({ notify: runtime.notify, performance: runtime.performance, projectIds: runtime.projectIds, channels: runtime.channels, log, everyMs: config.perfAlertsEveryMs })
    : null;
  // The monitors' clock judges each minute's missed and timed-out runs (workers/monitor-clock.ts).
  const clock = opts.queues.includes('events')
    ? makeMonitorClock({
        state: runtime.monitorsState,
        store: runtime.stores.checkins,
        log,
        monitors: runtime.monitors,
        installations: runtime.installations,
      }).start()
    : null;
  // The uptime probes due are checked every second by the same workers (src/services/probes.service.ts).
  const prober = opts.queues.includes('events') ? runtime.probes.start() : null;
  // Parts of transactions' counts are merged into minutes, hours and days (src/services/perf-rollup.service.ts).
  const rollup = opts.queues.includes('events') ? runtime.perfRollup.start() : null;
  const publisher = publishMetrics(runtime, 'worker');
  log.info({ queues: opts.queues, concurrency: opts.concurrency ?? opts.queues.map((q) => config.concurrency[q]) }, 'workers started');
  return {
    workers: pool.workers,
    flusher,
    dispatcher,
    async close(timeoutMs = config.shutdownTimeoutMs) {
      sweeper.stop();
      await clock?.stop();
      await prober?.stop();
      await rollup?.stop();
      await perfAlerts?.stop();
      await pool.close(timeoutMs);
      await flusher?.stop();
      await dispatcher?.stop();
      await publisher.stop();
    },
  };
}

/** Reads `lookout worker` options; a bad one is a UsageError (one line, exit 2). */
export function parseWorkerArgs(args: string[]): { queues: QueueKey[]; concurrency?: number } {
  const values = parseOptions(args, { queues: { type: 'string' }, concurrency: { type: 'string' } });
  const queues = (values.queues?.split(',').map((q) => q.trim()) ?? [...QUEUE_NAMES]) as QueueKey[];
  const unknown = queues.filter((q) => !(QUEUE_NAMES as readonly string[]).includes(q));
  if (unknown.length) throw new UsageError(`--queues: unknown queue ${unknown.join(', ')}; the queues are ${QUEUE_NAMES.join(', ')}`);
  if (values.concurrency === undefined) return { queues };
  const concurrency = Number(values.concurrency);
  if (!/^\d+$/.test(values.concurrency) || concurrency < 1 || concurrency > 1000) {
    throw new UsageError(`--concurrency takes a whole number from 1 to 1000, not "${values.concurrency}"`);
  }
  return { queues, concurrency };
}

export async function runWorkerCli(config: Config, args: string[]): Promise<void> {
  const { queues, concurrency } = parseWorkerArgs(args);
  // Started by `lookout start`, the worker has an IPC channel that closes when that process is gone, even
  // killed outright: the worker then stops too, and never outlives the service. Gone before the worker is
  // up, it just exits (a job it had taken is retried elsewhere).
  let stopNow: ((reason: string) => void) | null = null;
  if (process.send) {
    if (!process.connected) process.exit(0);
    process.once('disconnect', () => (stopNow ? stopNow('parent exited') : process.exit(0)));
  }
  const log = makeLogger(config.logLevel, 'worker');
  lowerPriority(config.workerNice, log);
  const runtime = await makeRuntime(config, storeUrls(config), log);
  const running = await startWorkers(runtime, { queues, concurrency });
  stopNow = onStopSignal(async (signal: string) => {
    log.info({ signal }, 'worker shutting down');
    await running.close();
    await runtime.close();
    process.exit(0);
  });
}
