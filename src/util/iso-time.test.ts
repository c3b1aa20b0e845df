import { describe, expect, it } from 'vitest';
import { isoTime } from './iso-time.ts';

describe('isoTime', () => {
  it.each([0, 1, 999, 1000, 59_999, 3_599_999, 86_399_999, 86_400_000, Date.UTC(2026, 10, 26, 23, 59, 59, 7), Date.UTC(2028, 1, 29, 12, 0, 0, 50), 253402300799999])(
    '%i as toISOString writes it',
    (ms) => {
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    },
  );
  it('agrees with toISOString over ten thousand times spread over a century', () => {
    for (let i = 0; i < 10_000; i++) {
      const ms = (i * 397_772_519_417) % 4_000_000_000_000;
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
  });
});
