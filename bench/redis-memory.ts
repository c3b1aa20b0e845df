/**
 * npm run bench:redis-memory -- [--sessions 100000]
 *
 * Redis memory of the session state, measured on a redis-server of its own:
 * `used_memory` before and after applying the same number of sessions
 * through the merge script, (a) without user ids, (b) each session with a
 * user of its own, (c) ten sessions per user. Per session = (a) / sessions;
 * per user = ((b) − (a)) / users. Rollups are a handful of keys in all runs.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import type { SessionUpdate } from '../src/domain/sessions.ts';
import { freePort } from '../src/embedded/process.ts';
import { startRedis } from '../src/embedded/redis.ts';
import { makeSessionState, SESSION_LAYOUT } from '../src/state/sessions.state.ts';
import { report, round } from './lib.ts';

const { values } = parseArgs({ options: { sessions: { type: 'string' } }, strict: true });
const SESSIONS = Number(values.sessions ?? 100_000);
const BATCH = 1000;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-redis-memory-'));
const server = await startRedis({ dir, port: await freePort(), pidFile: false });
const redis = new Redis(server.url);
try {
  const used = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);
  /** Bytes one run of SESSIONS sessions adds, users given by `did(i)`. */
  const run = async (name: string, did: (i: number) => string | null) => {
    await redis.flushall();
    const state = makeSessionState(redis, { prefix: `mem-${name}`, windowMs: 5 * 24 * 3600_000 });
    await redis.set(state.keys(1).epoch, await state.runId(1));
    await redis.set(state.keys(1).sessionLayout, SESSION_LAYOUT);
    const before = await used();
    const now = new Date();
    for (let b = 0; b < SESSIONS / BATCH; b++) {
      const sessions: SessionUpdate[] = Array.from({ length: BATCH }, (_, k) => {
        const i = b * BATCH + k;
        return { sid: crypto.randomBytes(16).toString('hex'), release: `app@${1 + (i % 3)}`, environment: 'production', status: 'ok', errors: 0, did: did(i), started: now };
      });
      await state.apply(1, `batch-${b}`, now, { sessions, aggregates: [] });
    }
    return (await used()) - before;
  };
  const hash = (i: number) => crypto.createHash('sha256').update(String(i)).digest('hex').slice(0, 16);
  const noUsers = await run('a', () => null);
  const ownUser = await run('b', (i) => hash(i));
  const tenEach = await run('c', (i) => hash(Math.floor(i / 10)));
  const perSession = noUsers / SESSIONS;
  const perUser = (ownUser - noUsers) / SESSIONS;
  report(
    'bench:redis-memory',
    { sessions: SESSIONS, bytes: { no_users: noUsers, one_user_per_session: ownUser, ten_sessions_per_user: tenEach }, per_session: round(perSession), per_user: round(perUser) },
    [
      ['sessions applied per run', SESSIONS],
      ['bytes per session (state for the update window)', round(perSession)],
      ['bytes per user (hourly and per-release state)', round(perUser)],
      ['bytes, ten sessions per user', tenEach],
    ],
  );
} finally {
  redis.disconnect();
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
