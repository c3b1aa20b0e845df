/**
 * The flusher copies what changed in Redis to MongoDB in bulk, every
 * FLUSH_INTERVAL_MS, in each worker process: release rollups and issues.
 *
 * One pass, for each of the two:
 * 1. reads the batches applied so far (before the projects, so their effects
 *    are in what step 2 reads);
 * 2. per project with changes: reads its changed documents and change
 *    counter in one script, records the counter in MongoDB, writes the
 *    documents with it as their version (absolute values, never older over
 *    newer), then takes them off the dirty list unless they changed meanwhile;
 * 3. when every project flushed, takes the batches off the backlog: their
 *    effects are durable in MongoDB now.
 * Two flushers at once only repeat work; the versions keep the newest.
 */
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { EventsStore } from '../store/events.store.ts';
import { makeTicker } from '../util/ticker.ts';
import type { IssuesStore } from '../store/issues.store.ts';
import type { SessionsStore } from '../store/sessions.store.ts';
import type { PendingFlush } from './pending-flush.ts';
import type { IssuesState } from './issues.state.ts';
import type { StateKeeper } from './rebuild.ts';
import { rollupDocs, type RollupSnapshot, type SessionState } from './sessions.state.ts';

/** One kind of hot state the flusher copies: what waits for it, and how one project is written. */
interface Stream {
  name: 'sessions' | 'issues';
  pending: PendingFlush;
  /** Writes the project's changes; answers how many documents it wrote, or null when the state needs verifying first. */
  flushProject(project: number): Promise<number | null>;
  finishBatches(ids: string[]): Promise<void>;
}

export function makeFlusher(deps: {
  state: SessionState;
  issuesState: IssuesState;
  keeper: StateKeeper;
  /**
   * Called with a project's rollups once they are written and before their dirty marks are cleared: the worker
   * wires the crash-free notification rules here (src/notify/rules.ts), which read the hour as written.
   */
  onRollupsWritten?: (project: number, rollups: RollupSnapshot[]) => Promise<void>;
  store: SessionsStore;
  issuesStore: IssuesStore;
  eventsStore: EventsStore;
  log: Logger;
  metrics: Metrics;
  intervalMs: number;
}) {
  const { state, issuesState, keeper, log, metrics } = deps;

  const streams: Stream[] = [
    {
      name: 'sessions',
      pending: state.pending,
      finishBatches: (ids) => deps.store.backlog.finish(ids),
      async flushProject(project) {
        const snap = await state.snapshot(project);
        if (!snap.verified) return null;
        if (snap.rollups.length === 0) return 0;
        await deps.store.setFlushedSeq(project, snap.seq);
        await deps.store.writeRollups(rollupDocs(project, snap.rollups, snap.seq));
        await deps.onRollupsWritten?.(project, snap.rollups);
        await state.clear(project, snap.rollups);
        return snap.rollups.length;
      },
    },
    {
      name: 'issues',
      pending: issuesState.pending,
      finishBatches: (ids) => deps.eventsStore.backlog.finish(ids),
      /** A chunk at a time, each written before the next is read, so no one script call holds Redis for long. */
      async flushProject(project) {
        let written = 0;
        let cursor = '0';
        do {
          const snap = await issuesState.snapshot(project, { cursor });
          if (!snap.verified) return null;
          cursor = snap.cursor;
          if (snap.issues.length === 0) continue;
          await deps.issuesStore.writeFlushed(
            project,
            snap.issues.map((i) => i.doc),
            snap.seq,
          );
          await issuesState.clear(
            project,
            snap.issues.map((i) => ({ id: i.doc._id, version: i.version })),
          );
          written += snap.issues.length;
        } while (cursor !== '0');
        return written;
      },
    },
  ];

  /** One stream's pass: the applied batches first, so their effects are in what the projects' snapshots read. */
  async function flushStream(stream: Stream, now: Date): Promise<number> {
    const { pending } = stream;
    const batches = await pending.appliedBatches();
    let failed = false;
    let written = 0;
    for (const project of await pending.dirtyProjects()) {
      await pending.takeDirty(project);
      try {
        let n = await stream.flushProject(project);
        if (n === null) {
          await keeper.verify(project, now);
          n = (await stream.flushProject(project)) ?? 0;
        }
        written += n;
      } catch (err) {
        failed = true;
        await pending.markDirty(project);
        log.warn({ stream: stream.name, project, err: (err as Error).message }, 'flush of a project failed; it is retried on the next tick');
      }
    }
    if (!failed && batches.length > 0) {
      await stream.finishBatches(batches);
      await pending.forgetApplied(batches);
    }
    return written;
  }

  /** One pass; resolves when the pass is over (a pass already running is joined). */
  const ticker = makeTicker(
    async () => {
      const stop = metrics.flushDuration.startTimer();
      const written = await Promise.all(streams.map((s) => flushStream(s, new Date())));
      stop();
      metrics.flushedDocuments.inc(written.reduce((a, b) => a + b, 0));
    },
    (err) => log.warn({ err: err.message }, 'flush failed; retrying on the next tick'),
    deps.intervalMs,
  );

  return {
    tick: ticker.tick,
    start: ticker.start,
    /** Stops the timer and runs a last pass, so a clean shutdown leaves nothing unflushed. */
    async stop(): Promise<void> {
      await ticker.stop();
      await ticker.tick();
    },
  };
}
export type Flusher = ReturnType<typeof makeFlusher>;
