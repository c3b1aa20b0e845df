/**
 * At most `limit` takes per key in any `windowMs` (a sliding window, not a calendar one: a calendar minute lets
 * twice the limit through across its boundary). Held in this process; keys idle for a window are forgotten.
 */
export function makeSlidingLimit(limit: number, windowMs: number) {
  const taken = new Map<string, number[]>();
  let sweptAt = 0;

  function forgetIdle(now: number): void {
    if (now - sweptAt < windowMs) return;
    sweptAt = now;
    for (const [key, times] of taken) if (times.at(-1)! <= now - windowMs) taken.delete(key);
  }

  return {
    /** Counts one for `key` and answers true, or answers false (counting nothing) when the window is full. */
    take(key: string, now: number): boolean {
      forgetIdle(now);
      const times = (taken.get(key) ?? []).filter((t) => t > now - windowMs);
      if (times.length >= limit) {
        taken.set(key, times);
        return false;
      }
      times.push(now);
      taken.set(key, times);
      return true;
    },
    /** Keys held (for tests). */
    size: () => taken.size,
  };
}
