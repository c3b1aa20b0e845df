/**
 * Group commit: callers hand in items and wait; items that arrive while a
 * write is in flight are written together by the next one. An idle system
 * writes at once (no timer), a busy one writes fewer, larger groups.
 * What waits (items, and the age of the oldest) is what admission reads
 * (src/domain/admission.ts); an item whose caller has gone by the time its
 * group is formed is not written (nobody would hear that it was).
 *
 * With `lingerMs`, a writer with nothing in flight holds its first item up
 * to that long while items come faster than one in that time, so a steady
 * stream is written in groups too. On a store with one writer (FerretDB)
 * each write is a commit of its own: at 600 events a second a write took
 * about 1 ms, so nearly every event was a commit of its own, and the store
 * spent as much CPU on them as on three times as many in a storm's groups.
 */
import crypto from 'node:crypto';

/** The last group id's millisecond and its sequence within it, in this process. */
let lastId = { ms: 0, seq: 0 };

/**
 * An id for a group written at once: base-36 milliseconds, a sequence within the millisecond, then random. The ids
 * one process makes sort in the order it made them (the clock going back holds the last millisecond), so groups
 * taken one after another sort in the order they were received (a check-in's place, src/store/checkins.store.ts).
 */
export function newGroupId(): string {
  const ms = Date.now();
  lastId = ms > lastId.ms ? { ms, seq: 0 } : { ms: lastId.ms, seq: lastId.seq + 1 };
  return `${lastId.ms.toString(36)}${lastId.seq.toString(16).padStart(6, '0')}${crypto.randomBytes(5).toString('hex')}`;
}

/** The bound below which every group id made before `ms` sorts (ids begin with their time). */
export function groupIdsBefore(ms: number): string {
  return ms.toString(36);
}

/** When a group id was made (NaN for an id `newGroupId` did not make). */
export function groupTime(group: string): number {
  return parseInt(group.slice(0, -16), 36);
}

export interface GroupCommitOptions<T> {
  /** most items in one write */
  maxItems: number;
  /** most writes in flight at once */
  maxInFlight: number;
  /** how many units an item weighs towards maxItems (default 1) */
  weight?: (item: T) => number;
  /** how long (ms) an idle writer waits for more items while they come more often than that (default 0: never) */
  lingerMs?: number;
}

/** How much one gap between items moves the mean gap the linger is decided on. */
const GAP_WEIGHT = 0.1;

/** How a store takes writes: how many at once, and how long an idle writer waits for more items (src/runtime.ts). */
export type GroupWrites = Pick<GroupCommitOptions<unknown>, 'maxInFlight' | 'lingerMs'>;

/** Whether an item was written, or left out because its caller had gone before its group was formed. */
export type Committed = 'written' | 'gone';

export function makeGroupCommit<T>(write: (items: T[]) => Promise<void>, opts: GroupCommitOptions<T>) {
  interface Pending {
    item: T;
    since: number;
    gone?: () => boolean;
    resolve: (c: Committed) => void;
    reject: (err: unknown) => void;
  }
  let pending: Pending[] = [];
  const weight = opts.weight ?? (() => 1);
  let inFlight = 0;
  /** when the oldest item of each write in flight was added: a write the store holds is waited for too */
  const writing = new Set<{ since: number }>();
  let idle: (() => void) | null = null;
  const lingerMs = opts.lingerMs ?? 0;
  /** the mean gap between items lately (ms), and when the last came */
  let meanGapMs = Infinity;
  let lastAdded = -Infinity;
  let lingering: NodeJS.Timeout | null = null;
  let draining = false;

  /** How many pending items the next write takes (at least one, then as many as fit `maxItems`), and whether they fill it. */
  function nextGroup(): { n: number; full: boolean } {
    let units = 0;
    let n = 0;
    for (; n < pending.length; n++) {
      const w = weight(pending[n]!.item);
      if (n > 0 && units + w > opts.maxItems) break;
      units += w;
    }
    return { n, full: n < pending.length || units >= opts.maxItems };
  }

  /** Whether an idle writer waits for more items before it writes what is pending: they come often, and the oldest is young. */
  function lingers(now: number): boolean {
    if (lingerMs <= 0 || draining || inFlight > 0 || meanGapMs >= lingerMs) return false;
    const waited = now - pending[0]!.since;
    if (waited >= lingerMs || nextGroup().full) return false;
    lingering ??= setTimeout(() => {
      lingering = null;
      pump();
    }, lingerMs - waited);
    return true;
  }

  function pump(): void {
    if (pending.length > 0 && lingers(performance.now())) return;
    while (inFlight < opts.maxInFlight && pending.length > 0) {
      // callers that went away are answered (to no one) and left out
      if (pending.some((p) => p.gone?.())) {
        for (const p of pending) if (p.gone?.()) p.resolve('gone');
        pending = pending.filter((p) => !p.gone?.());
        if (pending.length === 0) break;
      }
      const group = pending.splice(0, nextGroup().n);
      const started = { since: group[0]!.since };
      writing.add(started);
      inFlight += 1;
      write(group.map((g) => g.item))
        .then(
          () => group.forEach((g) => g.resolve('written')),
          (err: unknown) => group.forEach((g) => g.reject(err)),
        )
        .finally(() => {
          writing.delete(started);
          inFlight -= 1;
          if (inFlight === 0 && pending.length === 0) idle?.();
          pump();
        });
    }
    if (inFlight === 0 && pending.length === 0) idle?.();
  }

  return {
    /**
     * Resolves once the item's group is written ('written'), or at once when `gone` says its caller has gone
     * before the group was formed ('gone'); rejects with the write's error.
     */
    add(item: T, gone?: () => boolean): Promise<Committed> {
      return new Promise<Committed>((resolve, reject) => {
        const now = performance.now();
        const gap = now - lastAdded;
        meanGapMs = meanGapMs === Infinity ? gap : meanGapMs + GAP_WEIGHT * (gap - meanGapMs);
        lastAdded = now;
        pending.push({ item, since: now, gone, resolve, reject });
        pump();
      });
    },
    /** Items waiting for a write, and how long the oldest item not yet written (waiting, or in a write) has waited (ms). */
    waiting(): { items: number; oldestMs: number } {
      let oldest = pending.length === 0 ? Infinity : pending[0]!.since;
      for (const w of writing) oldest = Math.min(oldest, w.since);
      return { items: pending.length, oldestMs: oldest === Infinity ? 0 : performance.now() - oldest };
    },
    /** Resolves when nothing is pending or in flight. */
    drain(): Promise<void> {
      // what lingers is written now
      draining = true;
      if (lingering) clearTimeout(lingering);
      lingering = null;
      pump();
      if (inFlight === 0 && pending.length === 0) {
        draining = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        idle = () => {
          draining = false;
          resolve();
        };
      });
    },
  };
}
