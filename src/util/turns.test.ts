import { describe, expect, it } from 'vitest';
import { makeTurns } from './turns.ts';

const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe('turns', () => {
  it('give every request its turn, in order', async () => {
    const turns = makeTurns();
    const order: number[] = [];
    await Promise.all(Array.from({ length: 200 }, (_, i) => turns.take().then(() => order.push(i))));
    expect(order).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(turns.waiting()).toEqual({ items: 0, oldestMs: 0 });
  });

  it("serve senders in rotation: a calm one waits behind a turn of each, not behind a storm's queue", async () => {
    const turns = makeTurns();
    const order: string[] = [];
    const storm = Array.from({ length: 300 }, (_, i) => turns.take(1).then(() => order.push(`storm ${i}`)));
    const calm = [turns.take(2).then(() => order.push('calm 0')), turns.take(2).then(() => order.push('calm 1'))];
    await Promise.all([...storm, ...calm]);
    expect(order.indexOf('calm 0')).toBeLessThan(3);
    expect(order.indexOf('calm 1')).toBeLessThan(5);
    // each sender's own requests keep their order
    expect(order.filter((o) => o.startsWith('storm'))).toEqual(Array.from({ length: 300 }, (_, i) => `storm ${i}`));
    expect(turns.waiting()).toEqual({ items: 0, oldestMs: 0 });
  });

  it('say how long the longest-waiting request has waited, whichever sender it is', async () => {
    const turns = makeTurns();
    // requests queued within one turn of the loop wait for the next: none is given while this runs
    const all = [turns.take('a'), turns.take('b'), turns.take('b')];
    busy(5);
    const w = turns.waiting();
    expect(w.items).toBe(3);
    expect(w.oldestMs).toBeGreaterThanOrEqual(5);
    await Promise.all(all);
    expect(turns.waiting()).toEqual({ items: 0, oldestMs: 0 });
  });

  // The work of a turn is what runs from its give until its first wait; the loop's other work (here a timer of
  // 8 ms each turn of the loop, as a storm's refusals would be) is not counted as the turns'. Counted, it drove the
  // learned cost past the slice and each slice gave one turn.
  it("learn what a turn costs without the loop's other work", async () => {
    const turns = makeTurns();
    let other = true;
    const elsewhere = () => {
      if (!other) return;
      busy(8);
      setTimeout(elsewhere, 0);
    };
    elsewhere();
    await Promise.all(
      Array.from({ length: 150 }, () =>
        turns.take().then(async () => {
          busy(0.3);
          await new Promise((resolve) => setImmediate(resolve));
        }),
      ),
    );
    other = false;
    expect(turns.costMs()).toBeGreaterThan(0.2);
    expect(turns.costMs()).toBeLessThan(2);
  });
});
