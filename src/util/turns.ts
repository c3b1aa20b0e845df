/**
 * Turns of the thread for accepted ingest work (issue 66). An ingest request that was taken waits here, once its
 * body is read, for its turn before it is parsed, checked and prepared; turns are given a few at a time, once per
 * turn of the event loop, after the loop has read what arrived. So however much accepted work waits, a request that
 * is refused, a health check or a read is answered within one slice of it, and what waits for a turn shows as a
 * delay that admission can see (src/domain/admission.ts), rather than as a thread too busy to read its sockets.
 *
 * Turns go to senders (projects) in rotation, so a calm project beside a storm waits behind one turn of each other
 * sender, not behind the storm's whole queue.
 *
 * A slice is about SLICE_MS. Short slices keep the loop turning often, and that is how fast new connections come
 * in: Node 20's libuv accepts one connection per turn of the loop (libuv#3696). Longer slices when the loop is busy
 * with other things (half the thread for the work taken) took more of a storm but let its new connections wait
 * seconds in the kernel's accept queue, unseen by admission (bench:storm, 2026-11-30).
 *
 * How many turns fit a slice is learned from what the last slices cost: a turn's work runs from when it is given
 * until its first wait for I/O, in the microtasks that follow the slice. The measure is an immediate queued right
 * behind the slice's: Node runs both in one check phase, draining the microtasks between them, so it reads exactly
 * that work (a timer, as before, could fire after the next poll phase and count its I/O as the work's, which drove
 * the learned cost up and the slices down to one turn each).
 */
import { performance } from 'node:perf_hooks';

const SLICE_MS = 2;
const MAX_PER_SLICE = 64;

/** Who a turn is for: a project, or a key not resolved (one sender per key). */
export type TurnSender = string | number;

interface Waiting {
  give: () => void;
  since: number;
}

export function makeTurns() {
  // one queue per sender, served a turn each in rotation: a calm project's request waits behind the few others
  // have waiting now, not behind a storm's whole bufferful (which, first in first out, held it for seconds)
  const queues = new Map<TurnSender, { items: Waiting[]; head: number }>();
  const rotation: TurnSender[] = [];
  let next = 0;
  let waitingItems = 0;
  let armed = false;
  /** what one turn's work costs (ms), learned */
  let costMs = 0.5;
  /** the slice being measured: when it began and the turns it gave */
  let sliceAt = 0;
  let given = 0;

  /** The next sender's first waiting request, taken off its queue; a sender with none left leaves the rotation. */
  function takeNext(): Waiting {
    if (next >= rotation.length) next = 0;
    const sender = rotation[next]!;
    const q = queues.get(sender)!;
    const w = q.items[q.head++]!;
    waitingItems -= 1;
    if (q.head === q.items.length) {
      queues.delete(sender);
      rotation.splice(next, 1);
    } else {
      if (q.head > 1024 && q.head * 2 > q.items.length) [q.items, q.head] = [q.items.slice(q.head), 0];
      next += 1;
    }
    return w;
  }

  function slice(): void {
    armed = false;
    sliceAt = performance.now();
    given = Math.min(waitingItems, Math.max(1, Math.min(MAX_PER_SLICE, Math.floor(SLICE_MS / costMs))));
    for (let i = 0; i < given; i++) takeNext().give();
    if (waitingItems > 0) arm();
  }
  function measure(): void {
    if (given > 0) costMs = 0.8 * costMs + (0.2 * Math.max(0.02, performance.now() - sliceAt)) / given;
    given = 0;
  }
  function arm(): void {
    if (armed) return;
    armed = true;
    setImmediate(slice);
    setImmediate(measure);
  }

  return {
    /** Resolves when it is this request's turn. */
    take(sender: TurnSender = ''): Promise<void> {
      return new Promise((give) => {
        let q = queues.get(sender);
        if (!q) {
          queues.set(sender, (q = { items: [], head: 0 }));
          rotation.push(sender);
        }
        q.items.push({ give, since: performance.now() });
        waitingItems += 1;
        arm();
      });
    },
    /** What one turn's work costs (ms), as learned. */
    costMs: () => costMs,
    /** Requests waiting for their turn, and how long the longest-waiting has waited (ms). */
    waiting(): { items: number; oldestMs: number } {
      let oldest = Infinity;
      for (const q of queues.values()) oldest = Math.min(oldest, q.items[q.head]!.since);
      return { items: waitingItems, oldestMs: waitingItems === 0 ? 0 : performance.now() - oldest };
    },
  };
}
export type Turns = ReturnType<typeof makeTurns>;
