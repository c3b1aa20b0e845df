import { describe, expect, it } from 'vitest';
import { makeGroupCommit } from './group-commit.ts';

describe('makeGroupCommit', () => {
  it('writes at once when idle and groups what arrives during a write', async () => {
    const writes: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const group = makeGroupCommit<number>(async (items) => {
      writes.push(items);
      if (writes.length === 1) await gate;
    }, { maxItems: 3, maxInFlight: 1 });
    const done = [1, 2, 3, 4, 5].map((n) => group.add(n));
    release();
    await Promise.all(done);
    expect(writes).toEqual([[1], [2, 3, 4], [5]]);
  });

  it('weighs items and passes a failed write to each of its callers', async () => {
    const group = makeGroupCommit<number>(async (items) => {
      if (items.includes(13)) throw new Error('unlucky');
    }, { maxItems: 10, maxInFlight: 2, weight: (n) => n as number });
    const results = await Promise.allSettled([group.add(13), group.add(1)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
    await group.drain();
  });
});
