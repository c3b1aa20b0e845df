/**
 * The session merge script (src/state/scripts/merge-sessions-4.lua) on a real
 * Redis against its oracle, the pure `replayPart`: random streams of batches,
 * with redeliveries, entries past the update window, aggregates and users,
 * must leave the same rollups and session states on both paths.
 */
import crypto from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { emptyState, keys, replayPart, type BatchPart } from '../src/domain/release-health.ts';
import { STATUSES, type AggregateUpdate, type SessionUpdate } from '../src/domain/sessions.ts';
import { makeSessionState, type SessionState } from '../src/state/sessions.state.ts';
import { prng } from './helpers/prng.ts';

const WINDOW_MS = 5 * 24 * 3600_000;
let redis: Redis;
let state: SessionState;
beforeAll(() => {
  redis = new Redis(inject('redisUrl'));
  state = makeSessionState(redis, { prefix: `lookout_test_${crypto.randomBytes(4).toString('hex')}`, windowMs: WINDOW_MS });
});
afterAll(() => redis.disconnect());

function stream(seed: number, now: number) {
  const rnd = prng(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!;
  // each session keeps one user, release and start, as SDKs send them; some started before the window
  const sids = Array.from({ length: 12 }, (_, i) => ({
    sid: `sid-${seed}-${i}-xxxxxxxx`,
    did: rnd() < 0.7 ? `u${Math.floor(rnd() * 5)}` : null,
    release: pick(['1.0', '1.1', 'a|b"c']),
    environment: pick(['production', 'staging']),
    started: new Date(now - Math.floor(rnd() * 7 * 24 * 3600_000)),
  }));
  const batches: { id: string; at: Date; part: BatchPart }[] = [];
  for (let b = 0; b < 15; b++) {
    const sessions: SessionUpdate[] = Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => {
      const s = pick(sids);
      return { ...s, status: pick(STATUSES), errors: Math.floor(rnd() * 3) };
    });
    const aggregates: AggregateUpdate[] = rnd() < 0.4
      ? [{ release: pick(['1.0', '1.1']), environment: 'production', started: new Date(now - Math.floor(rnd() * 7 * 24 * 3600_000)), did: rnd() < 0.5 ? `u${Math.floor(rnd() * 5)}` : null, counts: { ok: Math.floor(rnd() * 3), errored: Math.floor(rnd() * 2), abnormal: 0, crashed: 1 } }]
      : [];
    batches.push({ id: `b-${seed}-${b}`, at: new Date(now + b * 1000), part: { sessions, aggregates } });
    if (rnd() < 0.25) batches.push(batches[Math.floor(rnd() * batches.length)]!); // a redelivery
  }
  return batches;
}

describe('merge-sessions script against replayPart', () => {
  it.each(Array.from({ length: 40 }, (_, i) => i + 1))('stream %i leaves the same rollups and session states', async (seed) => {
    const project = 1000 + seed;
    const now = Date.now() - 60_000; // Redis expires session states by the wall clock
    await redis.set(state.keys(project).epoch, await state.runId(project));
    const oracle = emptyState();
    const applied = new Set<string>();
    for (const batch of stream(seed, now)) {
      const result = await state.apply(project, batch.id, batch.at, batch.part);
      expect(result.code).toBe(applied.has(batch.id) ? 'already_applied' : 'applied');
      if (!applied.has(batch.id)) replayPart(project, oracle, batch.id, batch.part, batch.at, WINDOW_MS);
      applied.add(batch.id);
    }

    const snap = await state.snapshot(project);
    const fromRedis = Object.fromEntries(
      snap.rollups.map((r) => [r.kind === 'hour' ? keys.hour(project, r.release, r.environment, r.hour!) : keys.release(project, r.release, r.environment), { sessions: r.sessions, users: r.users }]),
    );
    const expected = Object.fromEntries(
      [...oracle.hours.values(), ...oracle.releases.values()].map((d) => [d._id, { sessions: d.sessions, users: d.users }]),
    );
    expect(fromRedis).toEqual(expected);
    for (const r of snap.rollups.filter((r) => r.kind === 'release')) {
      const doc = oracle.releases.get(keys.release(project, r.release, r.environment))!;
      expect([r.first_seen, r.last_seen]).toEqual([doc.first_seen, doc.last_seen]);
    }
    for (const doc of oracle.sessions.values()) {
      const stored = await state.session(project, doc.sid);
      expect(stored && { status: stored.status, errors: stored.errors, did: stored.did }).toEqual({ status: doc.status, errors: doc.errors, did: doc.did });
    }
  });

  it('refuses to run on a state not verified since this Redis started', async () => {
    const project = 999;
    await redis.set(state.keys(project).epoch, 'an-earlier-run');
    const part = { sessions: [{ sid: 'unverified-1', release: '1', environment: 'production', status: 'ok' as const, errors: 0, did: null, started: new Date() }], aggregates: [] };
    expect((await state.apply(project, 'b1', new Date(), part)).code).toBe('unverified');
    expect(await state.session(project, 'unverified-1')).toBeNull();
  });
});
