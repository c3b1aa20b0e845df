/**
 * Quotas shared by API processes through real Redis (src/state/quotas.ts): each process decides in memory and adds
 * what it took at each sync, so what one took counts against the other's next decisions (a process learns a
 * project's totals at the first sync after it first meets the project, and again every two seconds while it takes
 * nothing there).
 */
import crypto from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { DEFAULT_QUOTAS } from '../src/domain/quotas.ts';
import { makeQuotaCounter } from '../src/state/quotas.ts';

let redis: Redis;
beforeAll(() => {
  redis = new Redis(inject('redisUrl'));
});
afterAll(async () => {
  await redis?.quit();
});

const QUOTAS = { ...DEFAULT_QUOTAS, events_per_hour: 5, spike_protection: false };
/** Makes API processes' counters that share one Redis state, syncing only when told. */
function sharedCounters() {
  const prefix = `quota-test-${crypto.randomUUID()}`;
  const opts = { prefix, spikeFloorPerMinute: 60_000, syncMs: 3_600_000 };
  return () => makeQuotaCounter(redis, opts);
}

it('what one process took counts against the other after a sync', async () => {
  const counter = sharedCounters();
  const [a, b] = [counter(), counter()];
  const now = Date.now();
  for (let i = 0; i < 3; i++) expect(a.take(7, QUOTAS, 'error', 1, now).admit).toBe(true);
  expect(b.peek(7, QUOTAS, 'error', now).admit).toBe(true); // b meets the project
  await a.sync();
  await b.sync();
  expect(b.take(7, QUOTAS, 'error', 2, now).admit).toBe(true);
  expect(b.peek(7, QUOTAS, 'error', now)).toMatchObject({ admit: false, reason: 'quota_hour' });
  await b.sync();
  // a took nothing since its last sync: it reads the project's totals again within two seconds
  await new Promise((r) => setTimeout(r, 2100));
  await a.sync();
  expect(a.take(7, QUOTAS, 'error', 1, now)).toMatchObject({ admit: false, reason: 'quota_hour' });
  // another project is served as usual
  expect(a.take(8, QUOTAS, 'error', 1, now).admit).toBe(true);
  await Promise.all([a.close(), b.close()]);
});

it('what a process takes while its sync is on the way still counts', async () => {
  const a = sharedCounters()();
  const now = Date.now();
  for (let i = 0; i < 3; i++) expect(a.take(9, QUOTAS, 'error', 1, now).admit).toBe(true);
  const syncing = a.sync();
  expect(a.take(9, QUOTAS, 'error', 2, now).admit).toBe(true); // taken while Redis adds the first three
  await syncing;
  expect(a.peek(9, QUOTAS, 'error', now)).toMatchObject({ admit: false, reason: 'quota_hour' });
  await a.sync();
  expect(a.peek(9, QUOTAS, 'error', now)).toMatchObject({ admit: false, reason: 'quota_hour' });
  await a.close();
});
