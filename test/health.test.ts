/**
 * /healthz and /readyz with each store taken down in turn: readiness
 * answers 503 naming the store that failed, liveness stays 200, and both
 * recover when the store is back. The stores here are this file's own, so
 * stopping them does not disturb other test files.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../config/index.ts';
import { startFerret } from '../src/embedded/ferretdb.ts';
import { freePort, type ManagedProcess } from '../src/embedded/process.ts';
import { startRedis } from '../src/embedded/redis.ts';
import { call, makeProject, startTestContext, type TestContext } from './helpers/context.ts';

let ctx: TestContext;
let dir: string;
let redis: ManagedProcess;
let redisPort: number;
let ferret: ManagedProcess;
let ferretPort: number;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-health-'));
  redisPort = await freePort();
  redis = await startRedis({ dir: path.join(dir, 'redis'), port: redisPort, pidFile: false });
  ferretPort = await freePort();
  ferret = await startFerret({ dir: path.join(dir, 'ferretdb'), port: ferretPort, cacheDir: loadConfig({}).cacheDir, pidFile: false });
  ctx = await startTestContext({ REDIS_URL: redis.url, MONGODB_URL: ferret.url });
}, 120_000);
afterAll(async () => {
  await ctx?.close();
  await redis?.stop();
  await ferret?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await probe();
  while (!ok(last) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    last = await probe();
  }
  return last;
}
const ready = () => call(ctx, 'GET', '/readyz');

it('is alive and ready when both stores answer', async () => {
  expect((await call(ctx, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
  const res = await ready();
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ status: 'ready', checks: { redis: 'ok', mongodb: 'ok' } });
});

it('names Redis when Redis is down, and is ready again once it is back', async () => {
  const { secret } = await makeProject(ctx);
  await redis.stop();
  const down = await until(ready, (r) => r.status === 503);
  expect(down.status).toBe(503);
  expect(down.body).toMatchObject({ reason: 'store_unavailable', failing: ['redis'], checks: { mongodb: 'ok' } });
  expect(down.body.message).toMatch(/redis/);
  expect((await call(ctx, 'GET', '/healthz')).status).toBe(200);
  // A read of state in Redis says so, with a retry hint, instead of an anonymous 500.
  const issues = await call(ctx, 'GET', '/api/v1/issues', { key: secret });
  expect(issues.status).toBe(503);
  expect(issues.body).toMatchObject({ reason: 'state_unavailable' });
  expect(issues.headers.get('retry-after')).toBe('5');

  redis = await startRedis({ dir: path.join(dir, 'redis'), port: redisPort, pidFile: false });
  expect((await until(ready, (r) => r.status === 200)).status).toBe(200);
}, 60_000);

it('names MongoDB when MongoDB is down, and is ready again once it is back', async () => {
  await ferret.stop();
  const down = await until(ready, (r) => r.status === 503);
  expect(down.status).toBe(503);
  expect(down.body).toMatchObject({ reason: 'store_unavailable', failing: ['mongodb'], checks: { redis: 'ok' } });
  expect((await call(ctx, 'GET', '/healthz')).status).toBe(200);
  // ingestion says the store is down (after the driver's server selection timeout), never 202 nor a bare 500
  const refused = await call(ctx, 'POST', '/api/v1/events', { key: 'sk_whatever', body: { event_id: 'a'.repeat(32) } });
  expect(refused.status).toBe(503);
  expect(refused.body).toMatchObject({ reason: 'store_unavailable' });
  expect(refused.headers.get('retry-after')).toBe('5');

  ferret = await startFerret({ dir: path.join(dir, 'ferretdb'), port: ferretPort, cacheDir: loadConfig({}).cacheDir, pidFile: false });
  expect((await until(ready, (r) => r.status === 200, 40_000)).status).toBe(200);
}, 90_000);
