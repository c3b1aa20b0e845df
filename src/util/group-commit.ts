/**
 * Group commit: callers hand in items and wait; items that arrive while a
 * write is in flight are written together by the next one. An idle system
 * writes at once (no timer), a busy one writes fewer, larger groups.
 */
import crypto from 'node:crypto';

/** An id for a group written at once: time-ordered (base-36 milliseconds), then random. */
export function newGroupId(): string {
  return `${Date.now().toString(36)}${crypto.randomBytes(8).toString('hex')}`;
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
}

export function makeGroupCommit<T>(write: (items: T[]) => Promise<void>, opts: GroupCommitOptions<T>) {
  const pending: { item: T; resolve: () => void; reject: (err: unknown) => void }[] = [];
  const weight = opts.weight ?? (() => 1);
  let inFlight = 0;
  let idle: (() => void) | null = null;

  function pump(): void {
    while (inFlight < opts.maxInFlight && pending.length > 0) {
      let units = 0;
      let n = 0;
      while (n < pending.length && (n === 0 || units + weight(pending[n]!.item) <= opts.maxItems)) units += weight(pending[n++]!.item);
      const group = pending.splice(0, n);
      inFlight += 1;
      write(group.map((g) => g.item))
        .then(
          () => group.forEach((g) => g.resolve()),
          (err: unknown) => group.forEach((g) => g.reject(err)),
        )
        .finally(() => {
          inFlight -= 1;
          if (inFlight === 0 && pending.length === 0) idle?.();
          pump();
        });
    }
  }

  return {
    /** Resolves once the item's group is written; rejects with the write's error. */
    add(item: T): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        pending.push({ item, resolve, reject });
        pump();
      });
    },
    /** Resolves when nothing is pending or in flight. */
    drain(): Promise<void> {
      if (inFlight === 0 && pending.length === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        idle = resolve;
      });
    },
  };
}
