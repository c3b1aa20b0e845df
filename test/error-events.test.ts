/**
 * Error events as real SDKs send them (issue 22): every field kept and
 * scrubbed, an issue's events in pages with their neighbours, its spread and
 * hourly counts, and the issue list's filters and orders, read from the
 * indexes in Redis. Real Redis, BullMQ, FerretDB and workers.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { boundProject, call, drained, eventId, everythingStored, type TestContext } from './helpers/context.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
withWorkers(['events'], (c) => (ctx = c));

const python = () => ({ ...JSON.parse(fs.readFileSync(new URL('./fixtures/python-event.json', import.meta.url), 'utf8')), event_id: eventId(), timestamp: new Date().toISOString() });

const bound = () => boundProject(ctx);

const error = (type: string, extra: Record<string, unknown> = {}) => ({
  event_id: eventId(),
  timestamp: new Date().toISOString(),
  level: 'error',
  release: 'shop@1.0.0',
  environment: 'production',
  exception: { values: [{ type, value: `${type} happened`, stacktrace: { frames: [{ module: `app.${type.toLowerCase()}`, function: 'run', lineno: 10, in_app: true }] } }] },
  ...extra,
});

describe('a Python SDK error event', () => {
  it('is taken (202) and read back whole: source lines, vars, breadcrumbs, request, contexts, mechanism, unknown fields; every secret [Filtered]', async () => {
    const p = await bound();
    const event = python();
    const res = await p.send(event);
    expect(res.status).toBe(202);
    await drained(ctx);
    const list = (await p.get('/issues')).body;
    expect(list.issues[0]).toMatchObject({ title: 'CheckoutError: could not price the cart', culprit: 'shop.views in checkout', level: 'error', event_count: 1 });
    const issue = (await p.get(`/issues/${list.issues[0].id}`)).body;
    const stored = issue.latest_event;
    const [cause, raised] = stored.exception.values;
    expect(raised.mechanism).toEqual({ type: 'django', handled: false, exception_id: 0 });
    expect(cause.mechanism).toMatchObject({ type: 'chained', handled: true });
    const frame = raised.stacktrace.frames[1];
    expect(frame).toMatchObject({ context_line: '        amount = total(cart)', lineno: 88, in_app: true, raw_function: 'shop.views.checkout', instruction_addr: '0x0' });
    expect(frame.pre_context).toHaveLength(5);
    expect(frame.post_context).toHaveLength(5);
    expect(frame.vars.cart).toEqual({ id: 7, lines: 3, currency: 'EUR' });
    expect(stored.breadcrumbs.values).toHaveLength(3);
    expect(stored.breadcrumbs.values[1]).toMatchObject({ category: 'query', message: 'SELECT * FROM cart_line WHERE cart_id = %s' });
    expect(stored.request).toMatchObject({ url: 'https://shop.example.com/cart/checkout', method: 'POST', env: { SERVER_PORT: '443' } });
    expect(stored.contexts.runtime).toEqual({ name: 'CPython', version: '3.12.3', build: '3.12.3 (main)' });
    expect(stored).toMatchObject({ logger: 'shop.checkout', server_name: 'web-3.eu', transaction: '/cart/checkout', dist: 'b1', modules: { django: '5.0.6' } });
    expect(stored.surprise_field).toEqual({ from: 'a newer SDK', kept: true });
    expect(stored.tags).toEqual({ company: 'acme-gmbh', 'shop.region': 'eu' });
    expect(stored.user).toEqual({ id: '1042', username: 'ada', email: 'ada@example.com', ip_address: '203.0.113.0' });

    // Each secret-looking key, named, and the card numbers.
    const F = '[Filtered]';
    expect(frame.vars).toMatchObject({ card_number: F, password: F, api_key: F, session_token: F });
    expect(stored.request.headers).toMatchObject({ Cookie: F, Authorization: F, 'X-Api-Key': F, Host: 'shop.example.com' });
    expect(stored.request.cookies).toBe(F);
    expect(stored.request.query_string).toBe(`step=2&token=${F}`);
    expect(stored.request.data).toEqual({ card: F, remember: 'on', passwd: F });
    expect(stored.breadcrumbs.values[2].data.authorization).toBe(F);
    expect(stored.contexts.payment.client_secret).toBe(F);
    expect(stored.extra.db_password).toBe(F);
    expect(stored._meta['/request/headers/Authorization']).toEqual({ rem: 'filtered' });

    // Nothing of a secret reaches any collection.
    const text = await everythingStored(ctx);
    expect(text).toContain('amount = total(cart)'); // the payloads are read
    {
      for (const secret of ['hunter2-in-vars', 'cookie-secret', 'aGVhZGVyLXNlY3JldA', 'qs-secret-1', 'form-secret', 'crumb-secret', 'ctx-secret', 'extra-secret', '4111 1111 1111 1111', '5500-0000-0000-0004']) {
        expect(text).not.toContain(secret);
      }
    }
  });

  it('is trimmed, never refused: 400 frames and 150 breadcrumbs are kept to 250 and 100 and noted in _meta', async () => {
    const p = await bound();
    const frames = Array.from({ length: 400 }, (_, i) => ({ filename: `f${i}.py`, function: 'f', lineno: i, in_app: true }));
    const crumbs = Array.from({ length: 150 }, (_, i) => ({ message: `crumb ${i}` }));
    const res = await p.send({ ...error('DeepError'), exception: { values: [{ type: 'DeepError', stacktrace: { frames } }] }, breadcrumbs: crumbs });
    expect(res.status).toBe(202);
    await drained(ctx);
    const id = (await p.get('/issues')).body.issues[0].id;
    const stored = (await p.get(`/issues/${id}`)).body.latest_event;
    expect(stored.exception.values[0].stacktrace.frames).toHaveLength(250);
    expect(stored.breadcrumbs.values).toHaveLength(100);
    expect(stored.breadcrumbs.values[0].message).toBe('crumb 50');
    expect(stored._meta).toMatchObject({ '/exception/values/0/stacktrace/frames': { rem: 'frames', len: 400 }, '/breadcrumbs/values': { rem: 'breadcrumbs', len: 150 } });
  });
});

describe("an issue's events", () => {
  it('pages newest first, reads one by id with its newer and older neighbours, and refuses another issue’s event', async () => {
    const p = await bound();
    const base = Date.now() - 60 * 60_000;
    const sent = Array.from({ length: 7 }, (_, i) => error('PagedError', { timestamp: new Date(base + i * 60_000).toISOString(), release: `shop@1.${i % 2}` }));
    for (const e of sent) expect((await p.send(e)).status).toBe(202);
    const other = error('OtherError');
    await p.send(other);
    await drained(ctx);
    const issues = (await p.get('/issues?order=id')).body.issues;
    const id = issues.find((i: { title: string }) => i.title.startsWith('PagedError')).id;
    const otherId = issues.find((i: { title: string }) => i.title.startsWith('OtherError')).id;

    const first = (await p.get(`/issues/${id}/events?limit=3`)).body;
    expect(first).toMatchObject({ total: 7, limit: 3, offset: 0 });
    expect(first.events.map((e: { event_id: string }) => e.event_id)).toEqual([sent[6]!.event_id, sent[5]!.event_id, sent[4]!.event_id]);
    expect(first.events[0]).toMatchObject({ release: 'shop@1.0', environment: 'production', level: 'error', timestamp: sent[6]!.timestamp });
    const last = (await p.get(`/issues/${id}/events?limit=3&offset=6`)).body;
    expect(last.events.map((e: { event_id: string }) => e.event_id)).toEqual([sent[0]!.event_id]);

    const middle = (await p.get(`/issues/${id}/events/${sent[3]!.event_id}`)).body;
    expect(middle).toMatchObject({ issue_id: id, index: 3, newer: sent[4]!.event_id, older: sent[2]!.event_id });
    expect(middle.event.event_id).toBe(sent[3]!.event_id);
    expect((await p.get(`/issues/${id}/events/${sent[6]!.event_id}`)).body).toMatchObject({ index: 0, newer: null });
    expect((await p.get(`/issues/${id}/events/${sent[0]!.event_id}`)).body).toMatchObject({ index: 6, older: null });

    expect((await p.get(`/issues/${id}/events/${other.event_id}`)).status).toBe(404);
    expect((await p.get(`/issues/${otherId}/events/${sent[0]!.event_id}`)).body.reason).toBe('event_not_found');
    expect((await p.get(`/issues/${id}/events/not-an-id`)).status).toBe(404);
    expect((await p.get(`/issues/${id}/events?limit=101`)).body).toMatchObject({ reason: 'invalid_query' });

    const q = await bound();
    expect((await q.get(`/issues/${id}/events`)).status).toBe(404); // another project's issue
  });

  it("carries the issue's spread and hourly counts, kept as events are applied", async () => {
    const p = await bound();
    const now = Date.now();
    await p.send(error('SpreadError', { release: 'shop@2', environment: 'production', tags: { company: 'acme', 'page.kind': 'cart' } }));
    await p.send(error('SpreadError', { release: 'shop@2', environment: 'staging', tags: { company: 'acme', 'page.kind': 'cart' } }));
    await p.send(error('SpreadError', { release: 'shop@3', environment: 'production', tags: { company: 'globex' }, timestamp: new Date(now - 3 * 3_600_000).toISOString() }));
    await drained(ctx);
    const id = (await p.get('/issues')).body.issues[0].id;
    const issue = (await p.get(`/issues/${id}`)).body;
    expect(issue.spread).toEqual({
      releases: [{ value: 'shop@2', count: 2 }, { value: 'shop@3', count: 1 }],
      environments: [{ value: 'production', count: 2 }, { value: 'staging', count: 1 }],
      companies: [{ value: 'acme', count: 2 }, { value: 'globex', count: 1 }],
      actors: [],
      addresses: [],
      tags: [{ key: 'page.kind', total: 2, values: [{ value: 'cart', count: 2 }] }],
    });
    expect(issue.hourly.last_24h).toHaveLength(24);
    expect(issue.hourly.last_14d).toHaveLength(14 * 24);
    expect(issue.hourly.last_24h[23]).toBe(2);
    expect(issue.hourly.last_24h[20]).toBe(1);
    expect(issue.hourly.last_14d.reduce((a: number, b: number) => a + b, 0)).toBe(3);
  });
});

describe('the issue list: filters and orders', () => {
  it('filters by release, environment, level, company and text (as parameters or a search), and orders by first seen and event count', async () => {
    const p = await bound();
    const t = Date.now() - 30 * 60_000;
    const at = (m: number) => new Date(t + m * 60_000).toISOString();
    await p.send(error('AlphaError', { timestamp: at(0), release: 'shop@1', environment: 'production', tags: { company: 'acme' } }));
    await p.send(error('AlphaError', { timestamp: at(10), release: 'shop@1', environment: 'production', tags: { company: 'acme' } }));
    await p.send(error('AlphaError', { timestamp: at(11), release: 'shop@1', environment: 'production', tags: { company: 'acme' } }));
    await p.send(error('BetaError', { timestamp: at(5), release: 'shop@2', environment: 'staging', level: 'warning', tags: { company: 'globex' } }));
    await p.send(error('BetaError', { timestamp: at(6), release: 'shop@2', environment: 'staging', level: 'warning' }));
    await p.send(error('GammaError', { timestamp: at(2), release: 'shop@2', environment: 'production', transaction: 'GET /cart' }));
    await drained(ctx);
    const titles = async (query: string) => ((await p.get(`/issues?${query}`)).body.issues as { exception_type: string }[]).map((i) => i.exception_type);

    expect(await titles('')).toEqual(['AlphaError', 'BetaError', 'GammaError']);
    expect(await titles('order=first_seen')).toEqual(['BetaError', 'GammaError', 'AlphaError']);
    expect(await titles('order=event_count')).toEqual(['AlphaError', 'BetaError', 'GammaError']);
    expect(await titles('release=shop@2')).toEqual(['BetaError', 'GammaError']);
    expect(await titles('environment=production')).toEqual(['AlphaError', 'GammaError']);
    expect(await titles('level=warning')).toEqual(['BetaError']);
    expect(await titles('company=acme')).toEqual(['AlphaError']);
    expect(await titles('release=shop@2&environment=production')).toEqual(['GammaError']);
    expect(await titles('query=beta')).toEqual(['BetaError']);
    expect(await titles('query=GAMMAERROR%20happened')).toEqual(['GammaError']);
    expect(await titles('query=app.alphaerror')).toEqual(['AlphaError']); // the culprit
    expect(await titles('query=nothing-like-it')).toEqual([]);
    expect(await titles('release=shop@2&limit=1&offset=1')).toEqual(['GammaError']);
    const filtered = (await p.get('/issues?release=shop@2&order=first_seen')).body;
    expect(filtered).toMatchObject({ total: 2, release: 'shop@2', order: 'first_seen' });
    expect(filtered.issues[0].events_24h).toHaveLength(24);
    expect(filtered.issues[0].events_24h.reduce((a: number, b: number) => a + b, 0)).toBe(2);

    // the same through a search in Sentry's syntax; what the list does not serve yet is named
    const search = async (text: string) => (await p.get(`/issues?search=${encodeURIComponent(text)}`)).body;
    expect((await search('release:shop@2 environment:production')).issues.map((i: { exception_type: string }) => i.exception_type)).toEqual(['GammaError']);
    expect((await search('level:warning "beta"')).issues.map((i: { exception_type: string }) => i.exception_type)).toEqual(['BetaError']);
    expect((await search('is:resolved')).total).toBe(0);
    const unknown = await search('company:acme has:company is:open');
    expect(unknown.issues.map((i: { exception_type: string }) => i.exception_type)).toEqual(['AlphaError']);
    expect(unknown).toMatchObject({ status: 'unresolved', search: { search: 'company:acme has:company is:open' } });
    expect(unknown.search.unknown.map((u: { term: string }) => u.term)).toEqual(['is:open', 'has:company']);

    for (const [param, bad] of [['order', 'title'], ['level', 'loud'], ['kind', 'x'], ['release', ''], ['query', 'q'.repeat(501)], ['search', 's'.repeat(501)]]) {
      const res = await p.get(`/issues?${param}=${bad}`);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toBe(param);
    }
  });

  it('moves an issue between statuses in the list indexes', async () => {
    const p = await bound();
    await p.send(error('MovingError'));
    await drained(ctx);
    const id = (await p.get('/issues')).body.issues[0].id;
    await call(ctx, 'POST', `/api/v1/issues/${id}/status`, { key: p.secret, instance: p.instance, body: { status: 'resolved' } });
    expect((await p.get('/issues')).body.total).toBe(0);
    expect((await p.get('/issues?status=resolved&query=moving')).body.issues.map((i: { id: string }) => i.id)).toEqual([id]);
  });
});
