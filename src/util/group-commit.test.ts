import { describe, expect, it } from 'vitest';
import { groupTime, makeGroupCommit, newGroupId } from './group-commit.ts';

/** A group commit of one write at a time whose first write waits until `release` is called; its writes, in order. */
function heldAtFirstWrite(maxItems: number) {
  const writes: number[][] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const group = makeGroupCommit<number>(async (items) => {
    writes.push(items);
    if (writes.length === 1) await gate;
  }, { maxItems, maxInFlight: 1 });
  return { writes, release, group };
}

describe('makeGroupCommit', () => {
  it('writes at once when idle and groups what arrives during a write', async () => {
    const { writes, release, group } = heldAtFirstWrite(3);
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

  it('leaves out an item whose caller has gone before its group is formed, and says what waits', async () => {
    const { writes, release, group } = heldAtFirstWrite(10);
    const first = group.add(1);
    let gone = false;
    const left = group.add(2, () => gone);
    const kept = group.add(3, () => false);
    expect(group.waiting()).toMatchObject({ items: 2 });
    gone = true; // the caller of 2 closed its connection while 1 was being written
    release();
    expect(await Promise.all([first, left, kept])).toEqual(['written', 'gone', 'written']);
    expect(writes).toEqual([[1], [3]]);
    expect(group.waiting()).toEqual({ items: 0, oldestMs: 0 });
  });

  it('with a linger, writes a lone item at once and a steady stream in groups; drain writes what lingers', async () => {
    const writes: number[][] = [];
    const group = makeGroupCommit<number>(async (items) => void writes.push(items), { maxItems: 100, maxInFlight: 1, lingerMs: 20 });
    // nothing came before: the first is written at once
    await group.add(0);
    expect(writes).toEqual([[0]]);
    // thirty items 1 ms apart: the mean gap falls under the linger, and the rest wait for each other
    const sent: Promise<unknown>[] = [];
    for (let n = 1; n <= 30; n++) {
      sent.push(group.add(n));
      await new Promise((r) => setTimeout(r, 1));
    }
    await Promise.all(sent);
    expect(writes.flat()).toEqual(Array.from({ length: 31 }, (_, n) => n));
    expect(writes.length).toBeLessThan(20);
    // an item lingering is written by drain, not after the linger
    const lingering = group.add(31);
    const started = performance.now();
    await group.drain();
    await lingering;
    expect(performance.now() - started).toBeLessThan(15);
    expect(writes.at(-1)).toEqual([31]);
  });

  it('with a linger, writes at once what fills a group', async () => {
    const writes: number[][] = [];
    const group = makeGroupCommit<number>(async (items) => void writes.push(items), { maxItems: 3, maxInFlight: 1, lingerMs: 10_000 });
    for (let n = 0; n < 10; n++) await Promise.race([group.add(n), new Promise((r) => setTimeout(r, 1))]);
    // a full group never waits out the 10 s linger
    const started = performance.now();
    await Promise.all([group.add(10), group.add(11), group.add(12)]);
    expect(performance.now() - started).toBeLessThan(1000);
    await group.drain();
    expect(writes.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 13 }, (_, n) => n));
  });
});

describe('newGroupId', () => {
  it('sorts the ids one process makes in the order it made them, many within a millisecond, and names their time', () => {
    const before = Date.now();
    const ids = Array.from({ length: 5000 }, () => newGroupId());
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of [ids[0]!, ids.at(-1)!]) {
      expect(groupTime(id)).toBeGreaterThanOrEqual(before);
      expect(groupTime(id)).toBeLessThanOrEqual(Date.now());
    }
  });
});
