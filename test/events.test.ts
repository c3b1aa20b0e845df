/** Spec 2.6, 2.7, 3.1, 4.5–4.8 against real Redis, BullMQ and FerretDB, with real workers. */
import { describe, expect, it } from 'vitest';
import { boundProject, call, drained, eventId, everythingStored, type TestContext } from './helpers/context.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
withWorkers(['events'], (c) => (ctx = c));

const bound = (opts: { securityMonitoring?: boolean } = {}) => boundProject(ctx, opts);

const t0 = Date.parse('2026-11-20T10:00:00Z');
const at = (minutes: number) => new Date(t0 + minutes * 60_000).toISOString();
const attempt = (kind: string, minutes: number, extra: Record<string, unknown> = {}) => ({
  event_id: eventId(),
  timestamp: at(minutes),
  platform: 'php',
  security: { kind, actor: 'alice@example.com', ip: '203.0.113.7', user_agent: 'curl/8', ...extra },
});
const error = (type: string, value: string, extra: Record<string, unknown> = {}) => ({
  event_id: eventId(),
  timestamp: new Date().toISOString(),
  level: 'error',
  release: '1.0.0',
  exception: { values: [{ type, value, stacktrace: { frames: [{ module: 'app.cart', function: 'total', lineno: 10, in_app: true }] } }] },
  ...extra,
});

describe('POST /api/v1/events', () => {
  it('answers 202 {id, duplicate: false} and stores the event', async () => {
    const p = await bound();
    const body = attempt('login_failed', 0);
    const res = await p.send(body);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id: body.event_id, duplicate: false });
  });

  it('counts the same event_id once: a duplicate answers duplicate: true and changes nothing', async () => {
    const p = await bound();
    const body = error('DuplicateError', 'once');
    expect((await p.send(body)).body.duplicate).toBe(false);
    await drained(ctx);
    const before = (await p.get('/issues')).body.issues[0];
    const again = await p.send({ ...body, message: 'changed' });
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ id: body.event_id, duplicate: true });
    await drained(ctx);
    const after = (await p.get('/issues')).body.issues[0];
    expect(after).toEqual(before);
    expect(after.event_count).toBe(1);
  });

  it('refuses a security event when security monitoring is off', async () => {
    const p = await bound({ securityMonitoring: false });
    const res = await p.send(attempt('login_failed', 0));
    expect(res.status).toBe(403);
    expect(res.body.reason).toBe('security_monitoring_disabled');
    expect((await p.send(error('StillAccepted', 'errors are'))).status).toBe(202);
  });

  it.each([
    ['event_id not 32 lowercase hex', { event_id: 'ABC' }, '/event_id'],
    ['event_id uppercase', { event_id: 'A'.repeat(32) }, '/event_id'],
    ['timestamp not ISO', { timestamp: 'yesterday' }, '/timestamp'],
    ['unknown kind', { security: { kind: 'login_maybe', actor: 'a' } }, '/security/kind'],
    ['no actor nor actor_id', { security: { kind: 'login_failed', ip: '10.0.0.1' } }, '/security'],
    ['ip not an address', { security: { kind: 'login_failed', actor: 'a', ip: 'not-an-ip' } }, '/security/ip'],
    ['wrong type', { security: { kind: 'login_failed', actor: 42 } }, '/security/actor'],
    ['unknown key in security', { security: { kind: 'login_failed', actor: 'a', surprise: true } }, '/security/surprise'],
    ['no event_id', { event_id: undefined }, '/event_id'],
    ['exception.values not a list', { exception: { values: 'boom' } }, '/exception/values'],
  ])('400 for %s, naming the path', async (_name, patch, path) => {
    const p = await bound();
    const res = await p.send({ ...attempt('login_failed', 0), ...patch });
    expect(res.status).toBe(400);
    expect(res.body.reason).toBe('invalid_body');
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it('accepts IPv6 addresses and actor_id alone', async () => {
    const p = await bound();
    const res = await p.send({ event_id: eventId(), timestamp: at(0), security: { kind: 'login_failed', actor_id: '42', ip: '2001:db8::1' } });
    expect(res.status).toBe(202);
  });

  it('never stores a password, wherever it is sent', async () => {
    const p = await bound();
    const secret = 'hunter2-never-stored';
    const res = await p.send({
      ...attempt('login_failed', 0, { password: secret }),
      extra: { form: { user: 'alice', Password: secret, nested: [{ passwd: secret }] } },
    });
    expect(res.status).toBe(202);
    await drained(ctx);
    const stored = await everythingStored(ctx);
    expect(stored).toContain('alice'); // the payloads are read
    expect(stored).not.toContain(secret);
  });

  it('401 unknown key, 403 public key, 403 other instance', async () => {
    const p = await bound();
    expect((await call(ctx, 'POST', '/api/v1/events', { key: 'nope', body: attempt('login_failed', 0) })).status).toBe(401);
    expect((await call(ctx, 'POST', '/api/v1/events', { key: p.publicKey, body: attempt('login_failed', 0) })).status).toBe(403);
    const other = await call(ctx, 'POST', '/api/v1/events', { key: p.secret, instance: 'someone-else', body: attempt('login_failed', 0) });
    expect(other.status).toBe(403);
    expect(other.body.message).toMatch(/different instance/);
  });
});

describe('sign-in bursts', () => {
  it('five failures in ten minutes raise one security issue with exact counts', async () => {
    const p = await bound();
    for (let i = 0; i < 4; i++) await p.send(attempt('login_failed', i));
    await drained(ctx);
    expect((await p.get('/issues')).body.total).toBe(0);
    await p.send(attempt('login_failed', 4));
    await p.send(attempt('login_failed', 5)); // same burst, quiet period: updates the issue
    await drained(ctx);
    const list = (await p.get('/issues')).body;
    expect(list.total).toBe(1);
    expect(list.issues[0]).toMatchObject({ kind: 'security', exception_type: 'brute_force', event_count: 6, level: 'warning', status: 'unresolved' });
    expect(list.issues[0].first_seen).toBe(at(0));
    expect(list.issues[0].last_seen).toBe(at(5));
    const one = (await p.get(`/issues/${list.issues[0].id}`)).body;
    expect(one.latest_event.security.kind).toBe('login_failed');
  });

  it('a success resets the count; other kinds do not count', async () => {
    const p = await bound();
    for (let i = 0; i < 3; i++) await p.send(attempt('login_failed', i));
    await p.send(attempt('login_succeeded', 3));
    await p.send(attempt('password_reset_requested', 3.5));
    await p.send(attempt('login_failed', 4));
    await p.send(attempt('login_blocked', 4.5));
    await drained(ctx);
    expect((await p.get('/issues')).body.total).toBe(0);
  });

  it('attempts sent out of order give the same issue', async () => {
    const p = await bound();
    for (const minute of [4, 2, 0, 3, 1]) await p.send(attempt('login_failed', minute));
    await drained(ctx);
    const list = (await p.get('/issues')).body;
    expect(list.total).toBe(1);
    expect(list.issues[0].event_count).toBe(5);
  });

  it('raises a credential-stuffing issue when one address fails on many actors', async () => {
    const p = await bound();
    for (let i = 0; i < 10; i++) await p.send(attempt('login_failed', i * 0.5, { actor: `user${i}@example.com`, ip: '198.51.100.9' }));
    await drained(ctx);
    const list = (await p.get('/issues')).body;
    expect(list.issues.map((i: { exception_type: string }) => i.exception_type)).toEqual(['credential_stuffing']);
    expect(list.issues[0].event_count).toBe(10);
  });

  it('uses the project alert settings', async () => {
    const p = await bound();
    await ctx.runtime.admin.setAlerts(Number(p.project.id), { threshold: 2, window_seconds: 60 });
    await p.send(attempt('login_failed', 0));
    await p.send(attempt('login_failed', 0.5));
    await drained(ctx);
    expect((await p.get('/issues')).body.total).toBe(1);
  });
});

describe('error issues and status transitions (spec 3.1)', () => {
  it('groups events by fingerprint with title, type, level, release and companies', async () => {
    const p = await bound();
    await p.send(error('TypeError', 'a is undefined', { tags: { company: 'Acme' } }));
    await p.send(error('TypeError', 'b is undefined', { tags: { company: 'Globex' }, release: '1.1.0' }));
    await p.send(error('TypeError', 'c', { tags: { company: 'Acme' }, release: '1.1.0' }));
    await p.send(error('RangeError', 'other', { fingerprint: ['custom'] }));
    await drained(ctx);
    const list = (await p.get('/issues?order=id')).body;
    expect(list.total).toBe(2);
    const [typeError, custom] = list.issues;
    expect(typeError).toMatchObject({ exception_type: 'TypeError', level: 'error', event_count: 3, last_release: '1.1.0', status: 'unresolved', regression_count: 0, resolved_count: 0, last_regressed_at: null, last_regression_kind: null });
    expect(typeError.companies.sort()).toEqual(['Acme', 'Globex']);
    expect(typeError.title).toMatch(/^TypeError: /);
    expect(custom).toMatchObject({ exception_type: 'RangeError', event_count: 1 });
  });

  it('resolve, then an event of the same release: regression same_release', async () => {
    const p = await bound();
    await p.send(error('SameError', 'x', { release: '2.0.0' }));
    await drained(ctx);
    const id = (await p.get('/issues')).body.issues[0].id;
    expect((await p.post(`/issues/${id}/status`, { status: 'resolved' })).body).toEqual({ ok: true, status: 'resolved' });
    expect((await p.get('/issues?status=resolved')).body.issues[0]).toMatchObject({ id, resolved_count: 1, status: 'resolved' });
    await p.send(error('SameError', 'x', { release: '2.0.0' }));
    await drained(ctx);
    const issue = (await p.get(`/issues/${id}`)).body;
    expect(issue).toMatchObject({ status: 'unresolved', regression_count: 1, last_regression_kind: 'same_release', event_count: 2, resolved_count: 1 });
    expect(issue.last_regressed_at).toEqual(expect.any(String));
  });

  it('resolve, then an event of another release: regression new_release', async () => {
    const p = await bound();
    await p.send(error('NewError', 'x', { release: '2.0.0' }));
    await drained(ctx);
    const id = (await p.get('/issues')).body.issues[0].id;
    await p.post(`/issues/${id}/status`, { status: 'resolved' });
    await p.send(error('NewError', 'x', { release: '2.0.1' }));
    await drained(ctx);
    expect((await p.get(`/issues/${id}`)).body).toMatchObject({ status: 'unresolved', regression_count: 1, last_regression_kind: 'new_release', last_release: '2.0.1' });
  });

  it('a new event on an ignored issue updates counters and leaves it ignored', async () => {
    const p = await bound();
    await p.send(error('IgnoredError', 'x'));
    await drained(ctx);
    const id = (await p.get('/issues')).body.issues[0].id;
    expect((await p.post(`/issues/${id}/status`, { status: 'ignored' })).body).toEqual({ ok: true, status: 'ignored' });
    await p.send(error('IgnoredError', 'x'));
    await drained(ctx);
    expect((await p.get(`/issues/${id}`)).body).toMatchObject({ status: 'ignored', event_count: 2, regression_count: 0 });
    expect((await p.post(`/issues/${id}/status`, { status: 'unresolved' })).body).toEqual({ ok: true, status: 'unresolved' });
  });

  it('an unknown status is a 400; another project\'s issue is a 404; a public key is a 403', async () => {
    const p = await bound();
    const q = await bound();
    await p.send(error('MineError', 'x'));
    await drained(ctx);
    const id = (await p.get('/issues')).body.issues[0].id;
    const bad = await p.post(`/issues/${id}/status`, { status: 'closed' });
    expect(bad.status).toBe(400);
    expect(bad.body.reason).toBe('invalid_body');
    expect((await q.get(`/issues/${id}`)).status).toBe(404);
    expect((await q.post(`/issues/${id}/status`, { status: 'resolved' })).status).toBe(404);
    expect((await q.get('/issues/not-a-number')).status).toBe(404);
    expect((await call(ctx, 'GET', '/api/v1/issues', { key: p.publicKey, instance: p.instance })).status).toBe(403);
    expect((await call(ctx, 'GET', `/api/v1/issues/${id}`, { key: p.publicKey, instance: p.instance })).status).toBe(403);
    expect((await call(ctx, 'GET', '/api/v1/issues', { key: 'unknown' })).status).toBe(401);
    expect((await call(ctx, 'GET', '/api/v1/issues', { key: p.secret, instance: 'other-instance' })).status).toBe(403);
  });
});

describe('GET /api/v1/issues (spec 4.6)', () => {
  it('pages and orders, with defaults status=unresolved, limit 100, offset 0, order last_seen', async () => {
    const p = await bound();
    for (let i = 0; i < 5; i++) {
      await p.send(error(`PageError${i}`, 'x', { fingerprint: [`page-${i}`], timestamp: at(i) }));
    }
    await drained(ctx);
    const all = (await p.get('/issues')).body;
    expect(all).toMatchObject({ total: 5, limit: 100, offset: 0, order: 'last_seen' });
    expect(all.issues.map((i: { exception_type: string }) => i.exception_type)).toEqual(['PageError4', 'PageError3', 'PageError2', 'PageError1', 'PageError0']);
    const byId = (await p.get('/issues?order=id&limit=2&offset=1')).body;
    expect(byId).toMatchObject({ total: 5, limit: 2, offset: 1, order: 'id' });
    // ids follow the order in which workers first saw each fingerprint; the page is the 2nd and 3rd by id
    const idsAscending = all.issues.map((i: { id: string }) => Number(i.id)).sort((a: number, b: number) => a - b);
    expect(byId.issues.map((i: { id: string }) => Number(i.id))).toEqual(idsAscending.slice(1, 3));
    const resolved = (await p.get('/issues?status=resolved')).body;
    expect(resolved).toMatchObject({ total: 0, issues: [] });
  });

  it.each(['limit=0', 'limit=501', 'limit=abc', 'offset=-1', 'order=title', 'status=open', 'limit=1.5'])('400 for %s', async (query) => {
    const p = await bound();
    const res = await p.get(`/issues?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.reason).toBe('invalid_query');
  });
});
