/**
 * Turns of the thread for accepted ingest work (issue 66). An ingest request that was taken waits here, once its
 * body is read, for its turn before it is parsed, checked and prepared; turns are given a few at a time, once per
 * turn of the event loop, after the loop has read what arrived. So however much accepted work waits, a request that
 * is refused, a health check or a read is answered within one slice of it, and what waits for a turn shows as a
 * delay that admission can see (src/domain/admission.ts), rather than as a thread too busy to read its sockets.
 *
 * A slice is about SLICE_MS: how many turns fit is learned from what the last slices cost (a turn's work runs from
 * when it is given until its first wait for I/O). Short slices keep the loop turning often, and that is how fast
 * new connections come in: Node 20's libuv accepts one connection per turn of the loop (libuv#3696), so with 5 ms
 * slices a storm's new connections waited seconds in the kernel's accept queue (bench:storm prints it); 2 ms took
 * them about twice as fast for a few percent of the accepted work's throughput.
 */
import { performance } from 'node:perf_hooks';

const SLICE_MS = 2;
const MAX_PER_SLICE = 64;

export function makeTurns() {
  let queue: { give: () => void; since: number }[] = [];
  let head = 0;
  let armed = false;
  /** what one turn's work costs (ms), learned */
  let costMs = 0.5;

  function slice(): void {
    armed = false;
    const start = performance.now();
    const n = Math.min(queue.length - head, Math.max(1, Math.min(MAX_PER_SLICE, Math.floor(SLICE_MS / costMs))));
    for (let i = 0; i < n; i++) queue[head++]!.give();
    if (head > 1024 && head * 2 > queue.length) [queue, head] = [queue.slice(head), 0];
    // the turns' work runs once this returns; a timer runs after it (and at most a little more)
    setTimeout(() => {
      costMs = 0.8 * costMs + (0.2 * Math.max(0.05, performance.now() - start)) / n;
    }, 0);
    if (head < queue.length) arm();
  }
  function arm(): void {
    if (armed) return;
    armed = true;
    setImmediate(slice);
  }

  return {
    /** Resolves when it is this request's turn. */
    take(): Promise<void> {
      return new Promise((give) => {
        queue.push({ give, since: performance.now() });
        arm();
      });
    },
    /** Requests waiting for their turn, and how long the first has waited (ms). */
    waiting(): { items: number; oldestMs: number } {
      const items = queue.length - head;
      return { items, oldestMs: items === 0 ? 0 : performance.now() - queue[head]!.since };
    },
  };
}
export type Turns = ReturnType<typeof makeTurns>;
