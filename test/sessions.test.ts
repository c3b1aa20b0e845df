/**
 * Spec 2.5, 3.2, 4.4 and the sessions rows of 5, 7 and 8, against real
 * Redis, BullMQ and FerretDB with a real worker.
 */
import { describe, expect, it } from 'vitest';
import { startApi } from '../src/http/server.ts';
import { runRetention } from '../workers/digest/maintenance.ts';
import { call, drained, makeProject, rollupsAndRecount, startTestContext, type TestContext } from './helpers/context.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
withWorkers(['sessions', 'maintenance'], (c) => (ctx = c));

let sidCounter = 0;
const sid = () => `sid-${Date.now().toString(36)}-${(sidCounter++).toString().padStart(4, '0')}`;

async function project() {
  const p = await makeProject(ctx);
  const id = Number(p.project.id);
  const post = (body: unknown, opts: { key?: string; query?: string; contentType?: string; raw?: string } = {}) =>
    call(ctx, 'POST', `/api/v1/sessions${opts.query ?? ''}`, {
      key: opts.query ? undefined : (opts.key ?? p.publicKey),
      body,
      raw: opts.raw,
      contentType: opts.contentType,
    });
  const releases = (path = '') => call(ctx, 'GET', `/api/v1/releases${path}`, { key: p.secret });
  const exact = async () => {
    await drained(ctx);
    const { stored, recounted } = await rollupsAndRecount(ctx, id);
    expect(stored).toEqual(recounted);
    return stored;
  };
  return { ...p, id, post, releases, exact };
}

describe('POST /api/v1/sessions: the three body forms', () => {
  it('form 1: one session object → 202 {accepted: 1}', async () => {
    const p = await project();
    const res = await p.post({ sid: sid(), release: '1.0.0', status: 'ok', started: new Date().toISOString() });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 1, skipped: 0 });
    await p.exact();
  });

  it('form 2: {sessions: [...]} counts the entries that keep the rules and skips the others', async () => {
    const p = await project();
    const res = await p.post({
      sessions: [
        { sid: sid(), release: '1.0.0', status: 'ok' },
        { sid: sid(), release: '1.0.0', status: 'crashed', started: Math.floor(Date.now() / 1000) },
        { sid: 'short', release: '1.0.0', status: 'ok' },
        { sid: sid(), status: 'ok' },
        { sid: sid(), release: '1.0.0', status: 'sleeping' },
      ],
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      accepted: 2,
      skipped: 3,
      skipped_entries: [
        { index: 2, reason: 'invalid_entry', path: '/sessions/2/sid', message: '/sessions/2/sid: must be 8 to 64 letters, digits or dashes' },
        { index: 3, reason: 'missing_release', path: '/sessions/3/release', message: expect.stringMatching(/^\/sessions\/3\/release: is required/) },
        { index: 4, reason: 'invalid_entry', path: '/sessions/4/status', message: '/sessions/4/status: must be one of: ok, errored, abnormal, crashed, exited, unhandled' },
      ],
    });
    const stored = await p.exact();
    expect(Object.values(stored.releases)[0]!.sessions).toEqual({ ok: 1, errored: 0, abnormal: 0, crashed: 1 });
  });

  it('form 3: aggregates count the sessions they represent', async () => {
    const p = await project();
    const started = new Date().toISOString();
    const res = await p.post({ release: '2.0.0', environment: 'staging', aggregates: [{ started, exited: 7, errored: 2, crashed: 1, did: 'u-1' }, { started, ok: 3, abnormal: 1 }] });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 14, skipped: 0 });
    const stored = await p.exact();
    expect(Object.values(stored.releases)[0]).toEqual({
      sessions: { ok: 10, errored: 2, abnormal: 1, crashed: 1 },
      users: { ok: 0, errored: 0, abnormal: 0, crashed: 1 },
    });
  });

  it('reads Sentry-shaped session items: attrs.release, attrs.environment, exited', async () => {
    const p = await project();
    const res = await p.post({ sid: sid(), did: 'user-7', init: true, started: new Date().toISOString(), timestamp: new Date().toISOString(), duration: 1.5, status: 'exited', errors: 0, attrs: { release: 'app@3.1', environment: 'beta', user_agent: 'sdk' } });
    expect(res.status).toBe(202);
    await p.exact();
    const list = (await p.releases()).body;
    expect(list.releases[0]).toMatchObject({ release: 'app@3.1', environment: 'beta', sessions: { total: 1, ok: 1 } });
  });
});

describe('spec 3.2: re-sending an sid keeps the worst status', () => {
  it.each([
    [['ok', 'crashed', 'ok'], 'crashed'],
    [['errored', 'ok'], 'errored'],
    [['abnormal', 'errored'], 'abnormal'],
    [['ok', 'exited'], 'ok'],
  ])('%j → %s, counted once', async (statuses, final) => {
    const p = await project();
    const s = sid();
    for (const status of statuses) {
      expect((await p.post({ sid: s, release: '1.0', status })).status).toBe(202);
      await drained(ctx);
    }
    const stored = await p.exact();
    const counts = Object.values(stored.releases)[0]!.sessions as Record<string, number>;
    expect(counts[final]).toBe(1);
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(1);
  });

  it('errors > 0 makes a session errored, and the highest error count is kept', async () => {
    const p = await project();
    const s = sid();
    await p.post({ sid: s, release: '1.0', status: 'ok', errors: 3 });
    await p.post({ sid: s, release: '1.0', status: 'ok', errors: 1 });
    await p.exact();
    expect(await ctx.runtime.sessionState.session(p.id, s)).toMatchObject({ status: 'errored', errors: 3 });
  });

  it('a batch that repeats an sid with errored and crashed counts it once, as crashed', async () => {
    const p = await project();
    const s = sid();
    await p.post({ sessions: [{ sid: s, release: '1.0', status: 'errored', errors: 1 }, { sid: s, release: '1.0', status: 'crashed', errors: 1 }] });
    const stored = await p.exact();
    expect(Object.values(stored.releases)[0]!.sessions).toEqual({ ok: 0, errored: 0, abnormal: 0, crashed: 1 });
  });
});

describe('did is stored only as a keyed hash prefix', () => {
  it('no raw user id is anywhere in the stores', async () => {
    const p = await project();
    const did = 'alice.secret-user@example.com';
    const s = sid();
    await p.post({ sid: s, release: '1.0', status: 'ok', did });
    await p.post({ release: '1.0', aggregates: [{ exited: 1, did }] });
    await p.exact();
    for (const name of ['session_backlog', 'session_raw', 'release_hours', 'releases', 'session_flush']) {
      const docs = await ctx.runtime.mongo.db.collection(name).find().toArray();
      expect(JSON.stringify(docs), name).not.toContain('alice');
    }
    // the raw batches' requests are stored deflated: searched as they unpack
    const raw = [];
    for await (const { batch } of ctx.runtime.stores.sessions.batchesOf(p.id)) raw.push(batch);
    expect(raw.length).toBeGreaterThan(0);
    expect(JSON.stringify(raw)).not.toContain('alice');
    const redis = ctx.runtime.sessionState.redis;
    for (const key of await redis.keys(`${ctx.runtime.sessionState.keys(p.id).base}*`)) {
      const value = (await redis.type(key)) === 'hash' ? await redis.hgetall(key) : await redis.type(key) === 'string' ? await redis.get(key) : null;
      expect(`${key} ${JSON.stringify(value)}`).not.toContain('alice');
    }
    expect((await ctx.runtime.sessionState.session(p.id, s))!.did).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('authentication (spec 5) and CORS', () => {
  it('takes the public key in X-Service-Key or ?key=, refuses unknown (401) and secret (403) keys', async () => {
    const p = await project();
    const body = { sid: sid(), release: '1.0', status: 'ok' };
    expect((await p.post(body, { query: `?key=${p.publicKey}` })).status).toBe(202);
    const unknown = await p.post(body, { key: 'f'.repeat(32) });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toMatchObject({ reason: 'unknown_key' });
    const missing = await call(ctx, 'POST', '/api/v1/sessions', { body });
    expect(missing.status).toBe(401);
    const secret = await p.post(body, { key: p.secret });
    expect(secret.status).toBe(403);
    expect(secret.body).toMatchObject({ reason: 'public_key_required' });
  });

  it('takes navigator.sendBeacon posts (text/plain with ?key=) and answers CORS preflights for any origin', async () => {
    const p = await project();
    const beacon = await p.post(undefined, { query: `?key=${p.publicKey}`, raw: JSON.stringify({ sid: sid(), release: 'web@1', status: 'ok' }), contentType: 'text/plain;charset=UTF-8' });
    expect(beacon.status).toBe(202);
    expect(beacon.headers.get('access-control-allow-origin')).toBe('*');
    const preflight = await fetch(`${ctx.api}/api/v1/sessions`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-service-key' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/X-Service-Key/);
    expect(preflight.headers.get('access-control-allow-methods')).toMatch(/POST/);
    const refused = await p.post({ sid: 'x' }, { key: 'f'.repeat(32) });
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('bad input gets a clear 4xx and writes nothing', () => {
  const cases: [string, unknown, string | undefined, number, string][] = [
    ['wrong type of status', { sid: 'abcdefgh', release: '1', status: 5 }, undefined, 400, 'no_valid_sessions'],
    ['over-long sid', { sid: 'a'.repeat(65), release: '1', status: 'ok' }, undefined, 400, 'no_valid_sessions'],
    ['no release', { sid: 'abcdefgh', status: 'ok' }, undefined, 400, 'no_valid_sessions'],
    ['101 sessions', { sessions: Array.from({ length: 101 }, (_, i) => ({ sid: `sid-${i}-abcdefgh`, release: '1', status: 'ok' })) }, undefined, 400, 'invalid_body'],
    ['101 aggregates', { release: '1', aggregates: Array.from({ length: 101 }, () => ({ exited: 1 })) }, undefined, 400, 'invalid_body'],
    ['an unknown key', { sid: 'abcdefgh', release: '1', status: 'ok', admin: true }, undefined, 400, 'invalid_body'],
    ['a $-prefixed key', { sid: 'abcdefgh', release: '1', status: 'ok', $where: '1' }, undefined, 400, 'forbidden_key'],
    ['__proto__', undefined, '{"sid":"abcdefgh","release":"1","status":"ok","__proto__":{"x":1}}', 400, 'forbidden_key'],
    ['malformed JSON', undefined, '{"sid": "abcdefgh",', 400, 'malformed_json'],
    ['a JSON array', [], undefined, 400, 'invalid_body'],
    ['an empty release', { sid: 'abcdefgh', release: '', status: 'ok' }, undefined, 400, 'invalid_body'],
    ['a 10 kB release', { sid: 'abcdefgh', release: 'r'.repeat(10_000), status: 'ok' }, undefined, 400, 'invalid_body'],
    ['an over-long release in a batch entry', { sessions: [{ sid: 'abcdefgh', release: 'r'.repeat(201), status: 'ok' }] }, undefined, 400, 'no_valid_sessions'],
    ['both sessions and aggregates', { sessions: [], aggregates: [] }, undefined, 400, 'invalid_body'],
    ['an empty batch', { sessions: [] }, undefined, 400, 'no_valid_sessions'],
    ['negative counts', { release: '1', aggregates: [{ exited: -1 }] }, undefined, 400, 'no_valid_sessions'],
    ['started far in the past', { sid: 'abcdefgh', release: '1', status: 'ok', started: '2001-01-01T00:00:00Z' }, undefined, 400, 'no_valid_sessions'],
  ];
  it.each(cases)('%s', async (_name, body, raw, status, reason) => {
    const p = await project();
    const res = await p.post(body, { raw });
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ reason, message: expect.any(String) });
    expect(await ctx.runtime.stores.sessions.countOf(p.id)).toBe(0);
  });

  it('names the index, path and reason of each skipped entry', async () => {
    const p = await project();
    const res = await p.post({ sessions: [{ sid: 'short', release: '1', status: 'ok' }] });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      reason: 'no_valid_sessions',
      message: 'no entry could be stored: /sessions/0/sid: must be 8 to 64 letters, digits or dashes',
      errors: [{ index: 0, reason: 'invalid_entry', path: '/sessions/0/sid', message: '/sessions/0/sid: must be 8 to 64 letters, digits or dashes' }],
    });
  });

  it('names at most ten skipped entries, and counts them all', async () => {
    const p = await project();
    const old = new Date(Date.now() - 30 * 86_400_000).toISOString();
    const res = await p.post({ sessions: [{ sid: sid(), release: '1', status: 'ok' }, ...Array.from({ length: 12 }, () => ({ sid: sid(), release: '1', status: 'ok', started: old }))] });
    expect(res.body).toMatchObject({ accepted: 1, skipped: 12 });
    expect(res.body.skipped_entries).toHaveLength(10);
    expect(res.body.skipped_entries[0]).toEqual({ index: 1, reason: 'started_out_of_range', path: '/sessions/1/started', message: expect.stringMatching(/update window/) });
  });

  it('refuses other media types (415) and oversize bodies (413)', async () => {
    const p = await project();
    expect((await p.post(undefined, { raw: 'x', contentType: 'application/xml' })).status).toBe(415);
    const big = await p.post({ sid: 'abcdefgh', release: '1', status: 'ok', abnormal_mechanism: 'x'.repeat(2 * 1024 * 1024) });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ reason: 'payload_too_large' });
  });

  it('stores hostile but valid strings as data', async () => {
    const p = await project();
    const release = `<script>alert(1)</script>'; DROP TABLE x; -- {"$gt": ""}`;
    expect((await p.post({ sid: sid(), release, status: 'ok', environment: 'ünïcødé 🚀' })).status).toBe(202);
    await p.exact();
    const list = (await p.releases()).body;
    expect(list.releases[0]).toMatchObject({ release, environment: 'ünïcødé 🚀' });
  });
});

describe('rate limit (spec 8): per key, shared by all API processes', () => {
  it('announces 3,000 per minute on every answer', async () => {
    const p = await project();
    const res = await p.post({ sid: sid(), release: '1', status: 'ok' });
    expect(res.headers.get('ratelimit-policy')).toBe('3000;w=60');
    expect(res.headers.get('ratelimit')).toMatch(/^limit=3000, remaining=2999, reset=\d+$/);
  });

  it('answers 429 with Retry-After once two API processes together used the budget', async () => {
    const limited = await startTestContext({ SESSIONS_RATE_LIMIT_PER_MINUTE: '5' });
    const second = await startApi(limited.runtime, { host: '127.0.0.1', port: 0 });
    try {
      const p = await makeProject(limited);
      const post = (api: string) =>
        fetch(`${api}/api/v1/sessions`, { method: 'POST', headers: { 'x-service-key': p.publicKey, 'content-type': 'application/json' }, body: JSON.stringify({ sid: sid(), release: '1', status: 'ok' }) });
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await post(i % 2 ? second.url : limited.api)).status);
      expect(statuses).toEqual([202, 202, 202, 202, 202, 429]);
      const refused = await post(second.url);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.headers.get('ratelimit')).toMatch(/remaining=0/);
      expect(await refused.json()).toMatchObject({ reason: 'rate_limited', retry_after: expect.any(Number) });
      // another key has its own budget
      const other = await makeProject(limited);
      const res = await fetch(`${limited.api}/api/v1/sessions?key=${other.publicKey}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ sid: sid(), release: '1', status: 'ok' }) });
      expect(res.status).toBe(202);
    } finally {
      await second.close();
      await limited.close();
    }
  });
});

describe('releases read API', () => {
  it('lists releases with sessions, users, crash-free rates and adoption per environment', async () => {
    const p = await project();
    const now = new Date().toISOString();
    await p.post({
      sessions: [
        { sid: sid(), release: '1.0', status: 'ok', did: 'a', started: now },
        { sid: sid(), release: '1.0', status: 'crashed', did: 'a', started: now },
        { sid: sid(), release: '1.0', status: 'errored', did: 'b', started: now },
        { sid: sid(), release: '1.1', status: 'ok', did: 'c', started: now },
        { sid: sid(), release: '1.0', status: 'ok', environment: 'staging', started: now },
      ],
    });
    await p.exact();
    const list = await p.releases('?environment=production');
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(2);
    const r10 = list.body.releases.find((r: { release: string }) => r.release === '1.0');
    expect(r10).toMatchObject({
      environment: 'production',
      sessions: { total: 3, ok: 1, errored: 1, abnormal: 0, crashed: 1 },
      users: { total: 2, ok: 0, errored: 1, abnormal: 0, crashed: 1 },
      crash_free_sessions: 2 / 3,
      crash_free_users: 0.5,
      adoption_sessions: 0.75,
      adoption_users: 2 / 3,
    });
    const all = await p.releases();
    expect(all.body.total).toBe(3);
    const staging = all.body.releases.find((r: { environment: string }) => r.environment === 'staging');
    expect(staging).toMatchObject({ crash_free_users: null, adoption_sessions: 1, adoption_users: null });
  });

  it('GET /releases/<release> adds the hourly series; several environments need ?environment=', async () => {
    const p = await project();
    const hourAgo = new Date(Date.now() - 3600_000).toISOString();
    await p.post({ sessions: [{ sid: sid(), release: 'r/2', status: 'ok', started: hourAgo }, { sid: sid(), release: 'r/2', status: 'abnormal' }] });
    await p.exact();
    const one = await p.releases(`/${encodeURIComponent('r/2')}`);
    expect(one.status).toBe(200);
    expect(one.body.series).toHaveLength(2);
    expect(one.body.series.map((h: { sessions: { total: number } }) => h.sessions.total)).toEqual([1, 1]);
    expect(one.body.series[1]).toMatchObject({ sessions: { abnormal: 1 }, crash_free_sessions: 1 });

    await p.post({ sid: sid(), release: 'r/2', status: 'ok', environment: 'qa' });
    await p.exact();
    const ambiguous = await p.releases(`/${encodeURIComponent('r/2')}`);
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body).toMatchObject({ reason: 'environment_required', environments: ['production', 'qa'] });
    expect((await p.releases(`/${encodeURIComponent('r/2')}?environment=qa`)).body.sessions.total).toBe(1);
    expect((await p.releases('/nope')).status).toBe(404);
  });

  it('takes the secret key and the instance, like the issues endpoints', async () => {
    const p = await project();
    expect((await call(ctx, 'GET', '/api/v1/releases', { key: p.publicKey })).status).toBe(403);
    expect((await call(ctx, 'GET', '/api/v1/releases', { key: 'lk_sk_unknown' })).status).toBe(401);
    const instance = `inst-rel-${p.id}-0000`;
    expect((await call(ctx, 'POST', '/api/v1/sdk/activate', { key: p.secret, body: { instance_id: instance } })).status).toBe(200);
    const other = await call(ctx, 'GET', '/api/v1/releases', { key: p.secret, instance: 'another-instance' });
    expect(other.status).toBe(403);
    expect(other.body.message).toMatch(/bound to a different instance/);
    expect((await call(ctx, 'GET', '/api/v1/releases', { key: p.secret, instance })).status).toBe(200);
  });
});

describe('retention: 90 days', () => {
  it('the retention job removes raw entries older than 90 days; rollups stay', async () => {
    const p = await project();
    await p.post({ sessions: [{ sid: sid(), release: 'old', status: 'crashed', did: 'x' }] });
    await p.exact();
    const in91Days = new Date(Date.now() + 91 * 24 * 3600_000);
    const deleted = await runRetention(ctx.runtime, in91Days);
    expect(deleted.session_raw).toBeGreaterThanOrEqual(1);
    expect(await ctx.runtime.stores.sessions.countOf(p.id)).toBe(0);
    const list = (await p.releases()).body;
    expect(list.releases[0]).toMatchObject({ release: 'old', sessions: { total: 1, crashed: 1 } });
  });

  it('is scheduled hourly in BullMQ by the worker that serves the maintenance queue (the attempts repacker every 15 s)', async () => {
    const schedulers = await ctx.runtime.queues.queue('maintenance').getJobSchedulers();
    expect(schedulers.sort((a, b) => a.key.localeCompare(b.key))).toEqual([
      expect.objectContaining({ key: 'maintenance.repack', every: 15_000 }),
      expect.objectContaining({ key: 'maintenance.retention', every: 3600_000 }),
    ]);
  });
});
