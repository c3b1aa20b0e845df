/**
 * The session merge script (src/state/scripts/merge-sessions-4.lua) on a real
 * Redis against its oracle, the pure `replayPart`: random streams of batches,
 * with redeliveries, entries past the update window, aggregates and users,
 * must leave the same rollups and session states on both paths. The large
 * streams use SDK-shaped ids (32-hex sids, 16-hex dids, stored packed) and
 * grow the session table through many bucket splits and purges.
 */
import crypto from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { emptyState, keys, replayPart, type BatchPart } from '../src/domain/release-health.ts';
import { STATUSES, type AggregateUpdate, type SessionUpdate } from '../src/domain/sessions.ts';
import { chunksOf, makeSessionState, MERGE_CHUNK_ENTRIES, SESSION_LAYOUT, type SessionState } from '../src/state/sessions.state.ts';
import { prng } from './helpers/prng.ts';

const WINDOW_MS = 5 * 24 * 3600_000;
let redis: Redis;
let state: SessionState;
beforeAll(() => {
  redis = new Redis(inject('redisUrl'));
  state = makeSessionState(redis, { prefix: `lookout_test_${crypto.randomBytes(4).toString('hex')}`, windowMs: WINDOW_MS });
});
afterAll(() => redis.disconnect());

const hex = (rnd: () => number, digits: number) => Array.from({ length: digits }, () => Math.floor(rnd() * 16).toString(16)).join('');

function stream(seed: number, now: number, size: { sids: number; batches: number; sdkIds: boolean; stepMs: number } = { sids: 12, batches: 15, sdkIds: false, stepMs: 1000 }) {
  const rnd = prng(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!;
  const users = Array.from({ length: Math.max(5, size.sids / 3) }, (_, i) => (size.sdkIds ? hex(rnd, 16) : `u${i}`));
  // each session keeps one user, release and start, as SDKs send them; some started before the window
  const sids = Array.from({ length: size.sids }, (_, i) => ({
    sid: size.sdkIds ? hex(rnd, 32) : `sid-${seed}-${i}-xxxxxxxx`,
    did: rnd() < 0.7 ? pick(users) : null,
    release: pick(['1.0', '1.1', 'a|b"c']),
    environment: pick(['production', 'staging']),
    started: new Date(now - Math.floor(rnd() * 7 * 24 * 3600_000)),
  }));
  const batches: { id: string; at: Date; part: BatchPart }[] = [];
  for (let b = 0; b < size.batches; b++) {
    const sessions: SessionUpdate[] = Array.from({ length: 1 + Math.floor(rnd() * (size.sdkIds ? 60 : 6)) }, () => {
      const s = pick(sids);
      return { ...s, status: pick(STATUSES), errors: Math.floor(rnd() * 3) };
    });
    const aggregates: AggregateUpdate[] = rnd() < 0.4
      ? [{ release: pick(['1.0', '1.1']), environment: 'production', started: new Date(now - Math.floor(rnd() * 7 * 24 * 3600_000)), did: rnd() < 0.5 ? pick(users) : null, counts: { ok: Math.floor(rnd() * 3), errored: Math.floor(rnd() * 2), abnormal: 0, crashed: 1 } }]
      : [];
    batches.push({ id: `b-${seed}-${b}`, at: new Date(now + b * size.stepMs), part: { sessions, aggregates } });
    // a redelivery, within the day a batch id is remembered
    const originals = batches.filter((x, i) => batches.indexOf(x) === i);
    const recent = Math.min(originals.length, Math.floor(86_400_000 / size.stepMs));
    if (rnd() < 0.25) batches.push(originals[originals.length - 1 - Math.floor(rnd() * recent)]!);
  }
  return batches;
}

describe('merge-sessions script against replayPart', () => {
  const small = Array.from({ length: 40 }, (_, i) => [i + 1, 'small'] as const);
  const large = Array.from({ length: 4 }, (_, i) => [41 + i, 'large'] as const);
  it.each([...small, ...large])('stream %i (%s) leaves the same rollups and session states', async (seed, kind) => {
    const project = 1000 + seed;
    const now = Date.now();
    await redis.set(state.keys(project).epoch, await state.runId(project));
    await redis.set(state.keys(project).sessionLayout, SESSION_LAYOUT);
    const oracle = emptyState();
    const applied = new Set<string>();
    // large: 400 batches over six days, so sessions and user hours pass the window and are purged
    const size = kind === 'large' ? { sids: 3000, batches: 400, sdkIds: true, stepMs: 1_300_000 } : undefined;
    let last = new Date(now);
    for (const batch of stream(seed, now, size)) {
      last = batch.at;
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
    if (kind === 'large') {
      // The table's count is what its buckets hold, and every bucket stays in Redis' compact encoding.
      const base = state.keys(project).base;
      const buckets = await redis.keys(`${base}ss:*`);
      const lengths = await Promise.all(buckets.map((key) => redis.hlen(key)));
      expect(Number(await redis.hget(`${base}sm`, 'c'))).toBe(lengths.reduce((a, b) => a + b, 0));
      expect(Number(await redis.hget(`${base}sm`, 'n'))).toBeGreaterThan(8);
      expect(new Set(await Promise.all(buckets.map((key) => redis.object('ENCODING', key))))).toEqual(new Set(['listpack']));
    }
    // Read at the last batch's time: a session past the window then is forgotten (the oracle drops it at its next update).
    for (const doc of oracle.sessions.values()) {
      const stored = await state.session(project, doc.sid, last);
      const live = doc.started.getTime() >= last.getTime() - WINDOW_MS;
      expect(stored && { status: stored.status, errors: stored.errors, did: stored.did }).toEqual(live ? { status: doc.status, errors: doc.errors, did: doc.did } : null);
    }
  });

  it('a part whose first chunk was applied before (a worker killed halfway) is applied once, and leaves one mark', async () => {
    const project = 998;
    const now = new Date();
    await redis.set(state.keys(project).epoch, await state.runId(project));
    await redis.set(state.keys(project).sessionLayout, SESSION_LAYOUT);
    const sessions: SessionUpdate[] = Array.from({ length: 2 * MERGE_CHUNK_ENTRIES + 10 }, (_, i) => ({
      sid: `chunked-${i}-xxxxxxxx`,
      release: '1.0',
      environment: 'production',
      status: STATUSES[i % 4]!,
      errors: 0,
      did: `u${i % 7}`,
      started: new Date(now.getTime() - 60_000),
    }));
    const part: BatchPart = { sessions, aggregates: [] };
    const chunks = chunksOf(part);
    expect(chunks).toHaveLength(3);
    expect((await state.applyChunk(project, 'b-chunked', now, chunks[0]!, 0, chunks.length)).code).toBe('applied');

    const result = await state.apply(project, 'b-chunked', now, part);
    expect(result).toMatchObject({ code: 'applied', changed: sessions.length - MERGE_CHUNK_ENTRIES, unchanged: MERGE_CHUNK_ENTRIES });
    expect(await state.apply(project, 'b-chunked', now, part)).toMatchObject({ code: 'already_applied', unchanged: sessions.length });
    const oracle = emptyState();
    replayPart(project, oracle, 'b-chunked', part, now, WINDOW_MS);
    const snap = await state.snapshot(project);
    const release = snap.rollups.find((r) => r.kind === 'release')!;
    expect({ sessions: release.sessions, users: release.users }).toEqual({ sessions: oracle.releases.get(keys.release(project, '1.0', 'production'))!.sessions, users: oracle.releases.get(keys.release(project, '1.0', 'production'))!.users });
    expect(await redis.zrange(state.keys(project).applied, 0, -1)).toEqual(['b-chunked']);
  });

  it('refuses to run on a state not verified since this Redis started', async () => {
    const project = 999;
    await redis.set(state.keys(project).epoch, 'an-earlier-run');
    const part = { sessions: [{ sid: 'unverified-1', release: '1', environment: 'production', status: 'ok' as const, errors: 0, did: null, started: new Date() }], aggregates: [] };
    expect((await state.apply(project, 'b1', new Date(), part)).code).toBe('unverified');
    expect(await state.session(project, 'unverified-1')).toBeNull();
  });
});
