/**
 * Nothing acknowledged is lost, and rollups stay exact, while a worker
 * process is killed mid-batch and Redis is killed and restarted during
 * ingestion. Also: a merge interrupted right after its journal was written
 * is completed by the next merge of the project.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyWrites, planMerge } from '../src/domain/release-health.ts';
import { worse, type SessionStatus } from '../src/domain/sessions.ts';
import { freePort, type ManagedProcess } from '../src/embedded/process.ts';
import { startRedis } from '../src/embedded/redis.ts';
import { mergeState } from '../src/store/sessions.store.ts';
import { call, drained, makeProject, rollupsAndRecount, startTestContext, type TestContext } from './helpers/context.ts';
import { startProcess } from './helpers/process.ts';

let ctx: TestContext;
let redis: ManagedProcess;
let redisDir: string;
let redisPort: number;
beforeAll(async () => {
  redisDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-durability-'));
  redisPort = await freePort();
  redis = await startRedis({ dir: redisDir, port: redisPort, pidFile: false });
  ctx = await startTestContext({ REDIS_URL: redis.url, SWEEP_GRACE_SECONDS: '2', JOB_LOCK_MS: '3000' });
});
afterAll(async () => {
  await ctx?.close();
  await redis?.stop();
  fs.rmSync(redisDir, { recursive: true, force: true });
});

const STATUSES: SessionStatus[] = ['ok', 'ok', 'ok', 'errored', 'abnormal', 'crashed'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a worker killed mid-batch and Redis restarted during ingestion', () => {
  it('loses no acknowledged session and leaves rollups equal to a recount', async () => {
    const p = await makeProject(ctx);
    const project = Number(p.project.id);
    const workerEnv = { ...ctx.env, LOG_LEVEL: 'info' };
    const startWorker = async () => {
      const w = startProcess(['worker', '--queues', 'sessions', '--concurrency', '4'], workerEnv, /workers started/);
      await w.matched;
      return w;
    };
    const workers = [await startWorker(), await startWorker()];

    const acknowledged = new Map<string, SessionStatus>();
    const refused: string[] = [];
    let stop = false;
    let sent = 0;
    const client = async (c: number) => {
      let n = 0;
      while (!stop) {
        const known = [...acknowledged.keys()];
        const sessions = Array.from({ length: 5 }, (_, i) => {
          // a third of the entries update a session acknowledged before
          const sid = i % 3 === 0 && known.length ? known[(n * 7 + i) % known.length]! : `dur-${c}-${n}-${i}-xxxxxxxx`;
          return { sid, release: 'dur@1', status: STATUSES[(n + i + c) % STATUSES.length]!, did: `user-${(n + i) % 13}` };
        });
        n += 1;
        const res = await call(ctx, 'POST', '/api/v1/sessions', { key: p.publicKey, body: { sessions } }).catch((err: Error) => ({ status: 0, body: err.message }));
        sent += 1;
        await sleep(40); // bounded load: FerretDB v1 scans a collection per lookup, so volume sets the drain time
        if (res.status !== 202) {
          refused.push(`${res.status} ${JSON.stringify(res.body)}`);
          continue;
        }
        for (const s of sessions) acknowledged.set(s.sid, acknowledged.has(s.sid) ? worse(acknowledged.get(s.sid)!, s.status) : s.status);
      }
    };
    const clients = Array.from({ length: 4 }, (_, c) => client(c));

    await sleep(1500);
    workers[0]!.child.kill('SIGKILL'); // mid-batch: the workers are busy merging
    workers.push(await startWorker());
    await sleep(1000);
    process.kill(redis.pid, 'SIGKILL'); // Redis dies; jobs written in its last second may be lost
    await sleep(1500);
    redis = await startRedis({ dir: redisDir, port: redisPort, pidFile: false });
    await sleep(1500);
    stop = true;
    await Promise.all(clients);

    try {
      expect(refused).toEqual([]);
      expect(sent).toBeGreaterThan(20);
      await drained(ctx, 90_000);
      const stored = await ctx.runtime.stores.sessions.sessions.find({ project_id: project }, { projection: { sid: 1, status: 1 } }).toArray();
      const actual = new Map(stored.map((s) => [s.sid, s.status]));
      expect(actual.size).toBe(acknowledged.size);
      expect(Object.fromEntries(actual)).toEqual(Object.fromEntries(acknowledged));
      const { stored: rollups, recounted } = await rollupsAndRecount(ctx, project);
      expect(rollups).toEqual(recounted);
      const release = (await call(ctx, 'GET', '/api/v1/releases', { key: p.secret })).body.releases[0];
      expect(release.sessions.total).toBe(acknowledged.size);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
  }, 150_000);
});

describe('the journal', () => {
  it('a merge interrupted after writing its journal is completed by the next merge of the project', async () => {
    const p = await makeProject(ctx);
    const project = Number(p.project.id);
    const store = ctx.runtime.stores.sessions;
    const started = new Date();
    // What a worker would commit for two sessions, written to the journal only (then "killed").
    const writes = planMerge(project, mergeState({ sessions: [], aggregates: [] }, { hours: [], releases: [], users: [] }), [
      { sid: 'journal-aaaaaaaa', release: 'j@1', environment: 'production', status: 'crashed', errors: 1, did: 'd1', started },
      { sid: 'journal-bbbbbbbb', release: 'j@1', environment: 'production', status: 'ok', errors: 0, did: 'd1', started },
    ], [], started);
    await ctx.runtime.mongo.db.collection('session_heads').insertOne({ _id: project as never, journal: { insert: writes, replace: emptyWrites() }, merged_at: started });
    expect(await store.sessions.countDocuments({ project_id: project })).toBe(0);

    const workers = startProcess(['worker', '--queues', 'sessions'], { ...ctx.env, LOG_LEVEL: 'info' }, /workers started/);
    await workers.matched;
    try {
      await call(ctx, 'POST', '/api/v1/sessions', { key: p.publicKey, body: { sid: 'journal-bbbbbbbb', release: 'j@1', status: 'abnormal' } });
      await drained(ctx);
      expect(workers.output()).toMatch(/applied the journal of an interrupted session merge/);
      const { stored, recounted } = await rollupsAndRecount(ctx, project);
      expect(stored).toEqual(recounted);
      expect(Object.values(stored.releases)[0]).toEqual({ sessions: { ok: 0, errored: 0, abnormal: 1, crashed: 1 }, users: { ok: 0, errored: 0, abnormal: 0, crashed: 1 } });
    } finally {
      await workers.stop();
    }
  });
});
