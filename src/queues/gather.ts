/**
 * Gathers what the API stored over a few milliseconds into one job. A job
 * costs the workers and Redis about the same whatever it carries (BullMQ's
 * scripts, the job's events, the state check), so at the benchmark's rates
 * this turns some 300 jobs a second into 40 (docs/decisions.md). At low
 * rates each stored group is still a job of its own, sent `GATHER_MS` later.
 */
import type { Logger } from '../log.ts';
import { makeFullRedisLog } from '../redis/memory.ts';

/** How long stored items are gathered into one job: at most this is added to how soon they show. */
const GATHER_MS = 25;

export function makeJobGather<T>(
  send: (items: T[]) => Promise<unknown>,
  /** `gatherMs`: how long to gather (GATHER_MS unless given) */
  opts: { maxWeight: number; weight: (item: T) => number; log: Logger; gatherMs?: number },
) {
  const gathered: T[] = [];
  let weight = 0;
  let timer: NodeJS.Timeout | null = null;
  const sending = new Set<Promise<unknown>>();
  const full = makeFullRedisLog(opts.log);

  function flush(): void {
    if (timer) clearTimeout(timer);
    timer = null;
    const items = gathered.splice(0);
    weight = 0;
    if (items.length === 0) return;
    const sent = send(items)
      .catch((err: Error) => {
        full(err, 'enqueue');
        opts.log.warn({ err: err.message, items: items.length }, 'enqueue failed; the sweeper will enqueue what was stored');
      })
      .finally(() => sending.delete(sent));
    sending.add(sent);
  }

  return {
    /** Adds a stored item to the next job; the item is durable already, so nothing here is awaited. */
    add(item: T): void {
      gathered.push(item);
      weight += opts.weight(item);
      if (weight >= opts.maxWeight) flush();
      else timer ??= setTimeout(flush, opts.gatherMs ?? GATHER_MS);
    },
    /** Sends what is gathered and waits for every send in flight (graceful shutdown). */
    async drain(): Promise<void> {
      flush();
      await Promise.all([...sending]);
    },
  };
}
