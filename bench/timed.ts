/**
 * Timing of calls made one after another, shared by the benchmarks and by `read-client.ts` (which imports nothing
 * else, so that the process measuring reads holds little more than the reads).
 */

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/**
 * p50, p99 and the slowest (ms) of `count` calls of `run(i)` one after another, after a tenth of them as warm-up;
 * `samples` holds each timed call's start (epoch ms) and duration, in the order they ran.
 */
export async function timedInTurn(count: number, run: (i: number) => Promise<unknown>): Promise<{ p50: number; p99: number; max: number; samples: { at: number; ms: number }[] }> {
  for (let i = 0; i < Math.ceil(count / 10); i++) await run(i);
  const samples: { at: number; ms: number }[] = [];
  for (let i = 0; i < count; i++) {
    const at = Date.now();
    const t = performance.now();
    await run(i);
    samples.push({ at, ms: performance.now() - t });
  }
  const times = samples.map((s) => s.ms).sort((a, b) => a - b);
  const q = (p: number) => round(times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)]!, 1);
  return { p50: q(0.5), p99: q(0.99), max: round(times.at(-1)!, 1), samples };
}
