/**
 * A Redis that reaches its `maxmemory` (issue 25): it refuses every write
 * (noeviction), so jobs cannot be added or finished and the scripts cannot
 * apply. The API keeps acknowledging sessions and events (they are durable in
 * MongoDB), `/readyz`, a metric and a log line say Redis is full, and once
 * `maxmemory` is raised, processing catches up: every acknowledged session
 * and error event counted exactly once. Real Redis, BullMQ and FerretDB.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { worse, type SessionStatus } from '../src/domain/sessions.ts';
import { freePort, type ManagedProcess } from '../src/embedded/process.ts';
import { startRedis } from '../src/embedded/redis.ts';
import { redisMemory } from '../src/redis/memory.ts';
import { startWorkers } from '../workers/main.ts';
import { call, drained, eventId, makeProject, rollupsAndRecount, sessionStatuses, startTestContext, type TestContext } from './helpers/context.ts';
import { until } from './helpers/until.ts';

let ctx: TestContext;
let redis: ManagedProcess;
let admin: Redis;
let dir: string;
const logged: string[] = [];
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-redis-full-'));
  redis = await startRedis({ dir, port: await freePort(), pidFile: false });
  admin = new Redis(redis.url);
  const logTo = new Writable({
    write(chunk, _encoding, done) {
      logged.push(String(chunk));
      done();
    },
  });
  ctx = await startTestContext({ REDIS_URL: redis.url, SWEEP_GRACE_SECONDS: '1', JOB_LOCK_MS: '3000', LOG_LEVEL: 'error' }, { logTo });
});
afterAll(async () => {
  await ctx?.close();
  admin?.disconnect();
  await redis?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const STATUSES: SessionStatus[] = ['ok', 'ok', 'errored', 'crashed'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('keeps acknowledging while Redis is full, says so, and counts everything once after maxmemory is raised', async () => {
  const workers = await startWorkers(ctx.runtime, { queues: ['sessions', 'events'] });
  let stop = false;
  let clients: Promise<void>[] = [];
  try {
    const p = await makeProject(ctx);
    const project = Number(p.project.id);
    const started = new Date().toISOString();
    const acknowledged = new Map<string, SessionStatus>();
    const eventsAcked = new Map<string, number>();
    const refused: string[] = [];

    const sessionClient = async (c: number) => {
      for (let n = 0; !stop; n++) {
        const known = [...acknowledged.keys()];
        const sessions = Array.from({ length: 10 }, (_, i) => {
          const sid = i % 4 === 0 && known.length ? known[(n * 7 + i) % known.length]! : `full-${c}-${n}-${i}-xxxxxxxx`;
          return { sid, release: 'full@1', status: STATUSES[(n + i + c) % STATUSES.length]!, did: `user-${n % 17}`, started };
        });
        const res = await call(ctx, 'POST', '/api/v1/sessions', { key: p.publicKey, body: { sessions } });
        if (res.status !== 202) refused.push(`sessions ${res.status} ${res.text}`);
        else for (const s of sessions) acknowledged.set(s.sid, acknowledged.has(s.sid) ? worse(acknowledged.get(s.sid)!, s.status) : s.status);
        await sleep(20);
      }
    };
    const eventClient = async () => {
      for (let n = 0; !stop; n++) {
        const type = `FullRedisError${n % 3}`;
        const body = { event_id: eventId(), timestamp: new Date().toISOString(), release: 'full@1', exception: { values: [{ type, value: 'x'.repeat(2000) }] } };
        const res = await call(ctx, 'POST', '/api/v1/events', { key: p.secret, body });
        if (res.status !== 202) refused.push(`event ${res.status} ${res.text}`);
        else eventsAcked.set(type, (eventsAcked.get(type) ?? 0) + 1);
        await sleep(20);
      }
    };

    // A little room above what Redis holds now, filled by the load within seconds.
    const before = await redisMemory(admin);
    await admin.config('SET', 'maxmemory', String(before.used + 2 * 1024 * 1024));
    clients = [sessionClient(0), sessionClient(1), eventClient(), eventClient()];
    await until(async () => (await redisMemory(admin)).full, 60_000);
    await until(() => logged.some((line) => line.includes('Redis is full')), 30_000);

    // While full: ready but degraded, with the reason; the gauge says so; ingestion goes on.
    const ready = await call(ctx, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'degraded', reason: 'redis_full', checks: { redis: 'ok', mongodb: 'ok' } });
    expect((await call(ctx, 'GET', '/metrics')).text).toMatch(/^lookout_redis_full 1$/m);
    const whenFull = acknowledged.size;
    await sleep(3000);
    expect(acknowledged.size).toBeGreaterThan(whenFull);

    stop = true;
    await Promise.all(clients);
    expect(refused).toEqual([]);

    // Memory raised: what waited is applied, each once.
    await admin.config('SET', 'maxmemory', '0');
    await drained(ctx, 120_000);
    const actual = await sessionStatuses(ctx, project, acknowledged.keys());
    expect(actual.size).toBe(acknowledged.size);
    expect(Object.fromEntries(actual)).toEqual(Object.fromEntries(acknowledged));
    await until(async () => {
      const { stored, recounted } = await rollupsAndRecount(ctx, project);
      return JSON.stringify(stored) === JSON.stringify(recounted);
    });
    const release = (await call(ctx, 'GET', '/api/v1/releases', { key: p.secret })).body.releases[0];
    expect(release.sessions.total).toBe(acknowledged.size);
    await until(async () => {
      const issues = (await call(ctx, 'GET', '/api/v1/issues', { key: p.secret })).body.issues as { exception_type: string; event_count: number }[];
      return JSON.stringify(Object.fromEntries(issues.map((i) => [i.exception_type, i.event_count]).sort())) === JSON.stringify(Object.fromEntries([...eventsAcked].sort()));
    });
    await until(async () => (await call(ctx, 'GET', '/readyz')).body.status === 'ready');
  } finally {
    stop = true;
    await Promise.allSettled(clients);
    await workers.close();
  }
}, 240_000);
