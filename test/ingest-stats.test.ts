/**
 * A project's ingestion counts (src/state/ingest-stats.ts) outlive a Redis that is away: what was counted while it
 * was is written at the first flush after it is back. The Redis here is this file's own, so stopping it disturbs
 * no other test file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort, type ManagedProcess } from '../src/embedded/process.ts';
import { startRedis } from '../src/embedded/redis.ts';
import { makeIngestStats } from '../src/state/ingest-stats.ts';
import { defineScripts } from '../src/state/scripts.ts';

let dir: string;
let port: number;
let server: ManagedProcess;
let redis: Redis;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-ingest-stats-'));
  port = await freePort();
  server = await startRedis({ dir, port, pidFile: false });
  redis = new Redis(server.url, { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
  redis.on('error', () => {});
  defineScripts(redis);
}, 60_000);
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('what was counted while Redis was away is written once it is back', { timeout: 60_000 }, async () => {
  const stats = makeIngestStats(redis, { prefix: 'ingest-stats-test' });
  stats.record(4, 'accepted', 'event', '', 3);
  stats.record(4, 'dropped', 'event', 'quota_minute', 2);
  await server.stop();
  await expect(stats.flush()).rejects.toThrow();
  stats.record(4, 'accepted', 'event', '', 1);
  server = await startRedis({ dir, port, pidFile: false });
  const deadline = Date.now() + 30_000;
  while (redis.status !== 'ready' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await stats.flush();
  const counts = await stats.read(4, 1);
  expect(counts.accepted).toEqual({ event: 4 });
  expect(counts.dropped).toEqual([{ type: 'event', reason: 'quota_minute', count: 2 }]);
});
