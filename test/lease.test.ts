/**
 * A lease in real Redis: one holder at a time, and a holder whose lease ran
 * out and was taken by another neither renews nor ends the new holder's.
 */
import crypto from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { takeLease } from '../src/state/lease.ts';

let redis: Redis;
beforeAll(() => {
  redis = new Redis(inject('redisUrl'));
});
afterAll(async () => {
  await redis?.quit();
});

it('renews and ends only while held; a lapsed holder leaves the next holder alone', async () => {
  const key = `lease-test:${crypto.randomUUID()}`;
  const first = (await takeLease(redis, key, 100))!;
  expect(first).not.toBeNull();
  expect(await takeLease(redis, key, 100)).toBeNull();
  expect(await first.renew(60_000)).toBe(true);
  expect(await redis.pttl(key)).toBeGreaterThan(50_000);

  await redis.pexpire(key, 1); // the first holder stalls past its lease
  await new Promise((r) => setTimeout(r, 20));
  const second = (await takeLease(redis, key, 5_000))!;
  expect(second).not.toBeNull();
  expect(await first.renew(60_000)).toBe(false);
  expect(await redis.pttl(key)).toBeLessThanOrEqual(5_000);
  await first.end();
  expect(await redis.exists(key)).toBe(1);
  await second.end();
  expect(await redis.exists(key)).toBe(0);
});
