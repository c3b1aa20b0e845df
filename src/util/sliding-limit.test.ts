import { describe, expect, it } from 'vitest';
import { prng } from '../../test/helpers/prng.ts';
import { makeSlidingLimit } from './sliding-limit.ts';

describe('makeSlidingLimit', () => {
  it.each([
    ['all within one window', [0, 1, 2, 3], [true, true, true, false]],
    ['across a calendar boundary, still one window', [59_000, 59_500, 60_100, 60_200], [true, true, true, false]],
    ['a take frees when it leaves the window', [0, 1, 2, 59_999, 60_000], [true, true, true, false, true]],
    ['refusals do not count', [0, 1, 2, 3, 4, 60_001, 60_002], [true, true, true, false, false, true, true]],
  ])('%s', (_name, times, expected) => {
    const limit = makeSlidingLimit(3, 60_000);
    expect(times.map((t) => limit.take('k', t))).toEqual(expected);
  });

  it('keys are limited apart and idle ones forgotten', () => {
    const limit = makeSlidingLimit(1, 1000);
    expect([limit.take('a', 0), limit.take('b', 0), limit.take('a', 10)]).toEqual([true, true, false]);
    limit.take('c', 5000);
    expect(limit.size()).toBe(1);
  });

  it('never lets more than the limit through in any window', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const random = prng(seed);
      const n = 1 + Math.floor(random() * 8);
      const limit = makeSlidingLimit(n, 1000);
      const taken: number[] = [];
      for (let i = 0, t = 0; i < 200; i++, t += Math.floor(random() * 400)) if (limit.take('k', t)) taken.push(t);
      for (const start of taken) expect(taken.filter((x) => x >= start && x < start + 1000).length, `seed ${seed}`).toBeLessThanOrEqual(n);
    }
  });
});
