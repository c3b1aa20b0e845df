/**
 * The flusher copies what changed in Redis to MongoDB in bulk, every
 * FLUSH_INTERVAL_MS, in each worker process that serves the sessions queue.
 *
 * One tick:
 * 1. reads the batches applied so far (before the rollups, so their effects
 *    are in what step 2 reads);
 * 2. per project with changes: reads its changed rollups and change counter
 *    in one script, records the counter in MongoDB, writes the rollups with
 *    it as their version (absolute values, never older over newer), then
 *    takes them off the dirty list unless they changed meanwhile;
 * 3. when every project flushed, deletes the batches' backlog markers: their
 *    effects are durable in MongoDB now.
 * Two flushers at once only repeat work; the versions keep the newest.
 */
import type { HourRollup, ReleaseRollup } from '../domain/release-health.ts';
import { keys } from '../domain/release-health.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { Flushed, SessionsStore } from '../store/sessions.store.ts';
import type { StateKeeper } from './rebuild.ts';
import type { RollupSnapshot, SessionState } from './sessions.state.ts';

export function makeFlusher(deps: { state: SessionState; keeper: StateKeeper; store: SessionsStore; log: Logger; metrics: Metrics; intervalMs: number }) {
  const { state, keeper, store, log, metrics } = deps;
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;

  async function flushProject(project: number, now: Date): Promise<number> {
    let snap = await state.snapshot(project);
    if (!snap.verified) {
      await keeper.verify(project, now);
      snap = await state.snapshot(project);
    }
    if (snap.rollups.length === 0) return 0;
    await store.setFlushedSeq(project, snap.seq);
    const docs = { hours: [] as Flushed<HourRollup>[], releases: [] as Flushed<ReleaseRollup>[] };
    for (const r of snap.rollups) {
      if (r.kind === 'hour') docs.hours.push(hourDoc(project, r, snap.seq));
      else docs.releases.push(releaseDoc(project, r, snap.seq));
    }
    await store.writeRollups(docs);
    await state.clear(project, snap.rollups);
    return snap.rollups.length;
  }

  /** One pass; resolves when the pass is over (a pass already running is joined). */
  async function tick(now = new Date()): Promise<void> {
    if (running) return running;
    running = (async () => {
      const stop = metrics.flushDuration.startTimer();
      const batches = await state.appliedBatches();
      let failed = false;
      let rollups = 0;
      for (const project of await state.dirtyProjects()) {
        await state.takeDirty(project);
        try {
          rollups += await flushProject(project, now);
        } catch (err) {
          failed = true;
          await state.markDirty(project);
          log.warn({ project, err: (err as Error).message }, 'flush of a project failed; it is retried on the next tick');
        }
      }
      if (!failed && batches.length > 0) {
        await store.finishBatches(batches);
        await state.forgetApplied(batches);
      }
      stop();
      metrics.flushedRollups.inc(rollups);
    })()
      .catch((err: Error) => log.warn({ err: err.message }, 'flush failed; retrying on the next tick'))
      .finally(() => {
        running = null;
      });
    return running;
  }

  return {
    tick,
    start() {
      timer = setInterval(() => void tick(), deps.intervalMs);
      timer.unref();
    },
    /** Stops the timer and runs a last pass, so a clean shutdown leaves nothing unflushed. */
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      await running;
      await tick();
    },
  };
}
export type Flusher = ReturnType<typeof makeFlusher>;

function hourDoc(project: number, r: RollupSnapshot, v: number): Flushed<HourRollup> {
  const hour = r.hour!;
  return { _id: keys.hour(project, r.release, r.environment, hour), project_id: project, release: r.release, environment: r.environment, hour, sessions: r.sessions, users: r.users, v };
}

function releaseDoc(project: number, r: RollupSnapshot, v: number): Flushed<ReleaseRollup> {
  return {
    _id: keys.release(project, r.release, r.environment),
    project_id: project,
    release: r.release,
    environment: r.environment,
    sessions: r.sessions,
    users: r.users,
    first_seen: r.first_seen!,
    last_seen: r.last_seen!,
    v,
  };
}
