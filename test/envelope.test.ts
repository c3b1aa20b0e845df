/**
 * The Sentry-compatible envelope endpoint: session, sessions and event items
 * from hand-made envelopes, and from the real @sentry/node SDK pointed at a
 * loopback DSN.
 */
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { call, drained, eventId, makeProject, rollupsAndRecount, sessionCookie, type TestContext } from './helpers/context.ts';
import { runSentryApp } from './helpers/sentry-app.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
withWorkers(['sessions', 'events'], (c) => (ctx = c));

const lines = (...parts: unknown[]) => parts.map((p) => (typeof p === 'string' ? p : JSON.stringify(p))).join('\n');

async function send(path: string, body: string | Uint8Array, headers: Record<string, string> = {}) {
  const res = await fetch(`${ctx.api}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-sentry-envelope', ...headers }, body: typeof body === 'string' ? body : new Uint8Array(body) });
  return { status: res.status, body: await res.json() };
}

describe('POST /api/<project>/envelope/', () => {
  it('ingests session and sessions items, routes event items to issues and drops other types', async () => {
    const p = await makeProject(ctx);
    const id = p.project.id;
    const now = new Date().toISOString();
    const event = { event_id: eventId(), timestamp: Date.now() / 1000, platform: 'node', level: 'error', release: 'env@1', exception: { values: [{ type: 'RangeError', value: 'too far', stacktrace: { frames: [{ filename: 'app.js', function: 'go', lineno: 3, in_app: true, colno: 7, context_line: 'x' }] } }] }, breadcrumbs: [{ message: 'clicked' }], contexts: { os: { name: 'Linux' } }, user: { password: 'hunter2' } };
    const eventText = JSON.stringify(event);
    const envelope = lines(
      { event_id: event.event_id, sent_at: now },
      { type: 'session' },
      { sid: crypto.randomUUID(), did: 'device-1', init: true, started: now, status: 'exited', errors: 0, attrs: { release: 'env@1', environment: 'prod' } },
      { type: 'sessions' },
      { aggregates: [{ started: now, exited: 4, errored: 1 }], attrs: { release: 'env@1', environment: 'prod' } },
      { type: 'event', length: Buffer.byteLength(eventText) },
      eventText,
      { type: 'client_report' },
      { discarded_events: [] },
      { type: 'session' },
      { sid: 'bad', status: 'ok' },
    );
    const res = await send(`/api/${id}/envelope/?sentry_key=${p.publicKey}&sentry_version=7`, envelope);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: event.event_id, sessions: 6, dropped: ['session'] });
    await drained(ctx);
    const { stored, recounted } = await rollupsAndRecount(ctx, Number(id));
    expect(stored).toEqual(recounted);
    expect(Object.values(stored.releases)[0]!.sessions).toEqual({ ok: 5, errored: 1, abnormal: 0, crashed: 0 });
    const issues = (await call(ctx, 'GET', '/api/v1/issues', { key: p.secret })).body.issues;
    expect(issues).toEqual([expect.objectContaining({ exception_type: 'RangeError', last_release: 'env@1', event_count: 1 })]);
    const detail = (await call(ctx, 'GET', `/api/v1/issues/${issues[0].id}`, { key: p.secret })).body;
    expect(JSON.stringify(detail)).not.toContain('hunter2');
  });

  it('authenticates by X-Sentry-Auth, ?sentry_key= or the envelope dsn, and reads gzip bodies', async () => {
    const p = await makeProject(ctx);
    const id = p.project.id;
    const item = (dsn?: string) => lines({ ...(dsn ? { dsn } : {}) }, { type: 'session' }, { sid: crypto.randomUUID(), status: 'ok', attrs: { release: 'auth@1' } });
    expect((await send(`/api/${id}/envelope/`, item(), { 'x-sentry-auth': `Sentry sentry_version=7, sentry_client=test/1.0, sentry_key=${p.publicKey}` })).status).toBe(200);
    expect((await send(`/api/${id}/envelope/`, item(`http://${p.publicKey}@127.0.0.1:9/${id}`))).status).toBe(200);
    expect((await send(`/api/${id}/envelope/?sentry_key=${p.publicKey}`, new Uint8Array(zlib.gzipSync(item())), { 'content-encoding': 'gzip' })).status).toBe(200);
    await drained(ctx);
    expect((await call(ctx, 'GET', '/api/v1/releases', { key: p.secret })).body.releases[0].sessions.total).toBe(3);
  });

  it.each([
    ['no key', (id: string) => `/api/${id}/envelope/`, lines({}, { type: 'session' }, {}), 401, 'missing_key'],
    ['an unknown key', (id: string) => `/api/${id}/envelope/?sentry_key=${'0'.repeat(32)}`, lines({}), 401, 'unknown_key'],
    ['the secret key', (_id: string, secret: string) => `/api/1/envelope/?sentry_key=${secret}`, lines({}), 403, 'public_key_required'],
    ['another project in the path', (id: string, _s: string, pub: string) => `/api/${Number(id) + 1000}/envelope/?sentry_key=${pub}`, lines({}), 403, 'project_mismatch'],
    ['a malformed header', (id: string, _s: string, pub: string) => `/api/${id}/envelope/?sentry_key=${pub}`, 'not json\n', 400, 'malformed_envelope'],
    ['a length past the end', (id: string, _s: string, pub: string) => `/api/${id}/envelope/?sentry_key=${pub}`, lines({}, { type: 'event', length: 9999 }, '{}'), 400, 'malformed_envelope'],
    ['a non-numeric project', (_id: string, _s: string, pub: string) => `/api/abc/envelope/?sentry_key=${pub}`, lines({}), 400, 'invalid_project'],
  ])('refuses %s', async (_name, path, body, status, reason) => {
    const p = await makeProject(ctx);
    const res = await send(path(p.project.id, p.secret, p.publicKey), body);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ reason, message: expect.any(String) });
  });
});

describe('POST /api/<project>/store/ and /api/store/: every body form Relay reads', () => {
  const json = (event: Record<string, unknown>) => Buffer.from(JSON.stringify(event));
  it.each([
    ['JSON', (b: Buffer) => b, {}],
    ['gzip', (b: Buffer) => zlib.gzipSync(b), { 'content-encoding': 'gzip' }],
    ['deflate as zlib', (b: Buffer) => zlib.deflateSync(b), { 'content-encoding': 'deflate' }],
    ['deflate raw', (b: Buffer) => zlib.deflateRawSync(b), { 'content-encoding': 'deflate' }],
    ['br', (b: Buffer) => zlib.brotliCompressSync(b), { 'content-encoding': 'br' }],
    ['an empty Content-Encoding', (b: Buffer) => b, { 'content-encoding': '' }],
    ['Content-Encoding UTF-8', (b: Buffer) => b, { 'content-encoding': 'UTF-8' }],
    ['base64 of zlib (raven)', (b: Buffer) => Buffer.from(zlib.deflateSync(b).toString('base64')), { 'content-type': 'application/octet-stream' }],
    ['base64 of JSON', (b: Buffer) => Buffer.from(b.toString('base64')), { 'content-type': 'application/octet-stream' }],
    ['NaN and Infinity (Python)', (b: Buffer) => Buffer.from(b.toString().replace('"__nan__"', 'NaN').replace('"__inf__"', '-Infinity')), {}],
  ])('%s', async (_, encode, headers) => {
    const p = await makeProject(ctx);
    const id = eventId();
    const body = encode(json({ event_id: id, message: 'stored', timestamp: '2026-11-26T11:05:00', extra: { ratio: '__nan__', low: '__inf__' } }));
    const res = await fetch(`${ctx.api}/api/${p.project.id}/store/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-sentry-auth': `Sentry sentry_key=${p.publicKey}, sentry_version=7`, ...headers },
      body: new Uint8Array(body),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id });
    const stored = await ctx.runtime.stores.events.get(`${p.project.id}:${id}`);
    expect(stored).not.toBeNull();
  });

  it('authenticates by Authorization: Sentry, ?sentry_key= or the project-less path; an envelope posted there is read as one', async () => {
    const p = await makeProject(ctx);
    const post = (path: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${ctx.api}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body }).then(async (r) => ({ status: r.status, body: await r.json() }));
    const one = eventId();
    expect(await post(`/api/${p.project.id}/store/`, JSON.stringify({ event_id: one, message: 'a' }), { authorization: `Sentry sentry_key=${p.publicKey}` })).toEqual({ status: 200, body: { id: one } });
    const two = eventId();
    expect(await post(`/api/store/?sentry_key=${p.publicKey}`, JSON.stringify({ event_id: two, message: 'b' }))).toEqual({ status: 200, body: { id: two } });
    const three = eventId();
    const envelope = lines({ event_id: three }, { type: 'event' }, { event_id: three, message: 'c' });
    expect(await post(`/api/${p.project.id}/store/?sentry_key=${p.publicKey}`, envelope)).toMatchObject({ status: 200, body: { id: three, dropped: [] } });
    for (const id of [one, two, three]) expect(await ctx.runtime.stores.events.get(`${p.project.id}:${id}`)).not.toBeNull();
    expect(await post(`/api/${p.project.id}/store/`, JSON.stringify({ message: 'x' }))).toMatchObject({ status: 401, body: { reason: 'missing_key' } });
    expect(await post(`/api/${p.project.id}/store/?sentry_key=${p.publicKey}`, 'not json')).toMatchObject({ status: 400, body: { reason: 'malformed_json' } });
  });
});

describe('user feedback (feedback and user_report items)', () => {
  it('is kept with the issue of its event, sent before or after it, counted in the list, and linked again after a rebuild', async () => {
    const p = await makeProject(ctx);
    const id = p.project.id;
    const url = `/api/${id}/envelope/?sentry_key=${p.publicKey}`;
    const [first, second] = [eventId(), eventId()];
    const error = (event: string) => lines({ event_id: event }, { type: 'event' }, { event_id: event, exception: { values: [{ type: 'CartError', value: 'cart lost' }] } });
    // feedback about the first event, after it (captureFeedback's item)
    expect((await send(url, error(first))).status).toBe(200);
    const feedbackId = eventId();
    const feedback = lines({ event_id: feedbackId }, { type: 'feedback' }, {
      event_id: feedbackId, timestamp: Date.now() / 1000, type: 'feedback',
      contexts: { feedback: { message: 'The cart emptied itself; card 4111 1111 1111 1111', contact_email: 'ann@example.com', name: 'Ann', associated_event_id: first, url: 'https://shop.example/cart' } },
    });
    expect((await send(url, feedback)).body.dropped).toEqual([]);
    // an older SDK's user_report about the second event, before the event itself
    expect((await send(url, lines({}, { type: 'user_report' }, { event_id: second, name: 'Bo', email: 'bo@example.com', comments: 'Again!' }))).body.dropped).toEqual([]);
    expect((await send(url, error(second))).status).toBe(200);
    await drained(ctx);
    const list = (await call(ctx, 'GET', '/api/v1/issues', { key: p.secret })).body.issues;
    expect(list).toEqual([expect.objectContaining({ title: 'CartError: cart lost', event_count: 2, user_feedback: 2 })]);
    const issue = list[0].id as string;
    const read = async () => (await call(ctx, 'GET', `/api/v1/issues/${issue}/feedback`, { key: p.secret })).body;
    const expected = {
      total: 2,
      limit: 25,
      offset: 0,
      feedback: [
        expect.objectContaining({ event_id: second, source: 'user_report', name: 'Bo', email: 'bo@example.com', comments: 'Again!' }),
        expect.objectContaining({ id: feedbackId, event_id: first, source: 'feedback', name: 'Ann', email: 'ann@example.com', url: 'https://shop.example/cart', comments: 'The cart emptied itself; card [Filtered]' }),
      ],
    };
    expect(await read()).toEqual(expected);
    expect((await call(ctx, 'GET', `/api/v1/issues/${issue}`, { key: p.secret })).body.user_feedback).toBe(2);
    // Redis loses the project's state: the rebuild links the feedback again from MongoDB
    await ctx.runtime.keeper.rebuild(Number(id), new Date());
    expect(await read()).toEqual(expected);
    // feedback with nothing written is dropped, and counted
    expect((await send(url, lines({}, { type: 'user_report' }, { event_id: second, comments: '  ' }))).body.dropped).toEqual(['user_report']);
  });
});

describe('attachments', () => {
  it('are kept with their event up to its cap, listed with size and type, downloaded by members as files; one over the cap is noted', async () => {
    const p = await makeProject(ctx);
    const id = p.project.id;
    const url = `/api/${id}/envelope/?sentry_key=${p.publicKey}`;
    const event = eventId();
    const log = Buffer.from('line 1\nline 2 <script>alert(1)</script>\n');
    const big = crypto.randomBytes(700 * 1024);
    const envelope = (...parts: Buffer[]) => Buffer.concat(parts.flatMap((part, i) => (i === 0 ? [part] : [Buffer.from('\n'), part])));
    const item = (header: Record<string, unknown>, data: Buffer) => envelope(Buffer.from(JSON.stringify({ ...header, length: data.length })), data);
    const first = envelope(
      Buffer.from(JSON.stringify({ event_id: event })),
      Buffer.from(JSON.stringify({ type: 'event' })),
      Buffer.from(JSON.stringify({ event_id: event, exception: { values: [{ type: 'UploadError', value: 'with files' }] } })),
      item({ type: 'attachment', filename: 'page.html', content_type: 'text/html' }, log),
      item({ type: 'attachment', filename: 'dump.bin', attachment_type: 'event.minidump' }, big),
    );
    expect((await send(url, first)).body.dropped).toEqual([]);
    // the same file again (an SDK's retry) is kept once; a second large one passes the event's 1 MiB cap: noted
    const second = envelope(Buffer.from(JSON.stringify({ event_id: event })), item({ type: 'attachment', filename: 'page.html', content_type: 'text/html' }, log), item({ type: 'attachment', filename: 'more.bin' }, big));
    expect((await send(url, second)).body.dropped).toEqual(['attachment']);
    await drained(ctx);
    const [issue] = (await call(ctx, 'GET', '/api/v1/issues', { key: p.secret })).body.issues;
    const shown = (await call(ctx, 'GET', `/api/v1/issues/${issue.id}/events/${event}`, { key: p.secret })).body;
    expect(shown.attachments).toEqual([
      { slot: 0, filename: 'page.html', content_type: 'text/html', attachment_type: 'event.attachment', size: log.length, kept: true },
      { slot: 1, filename: 'dump.bin', content_type: null, attachment_type: 'event.minidump', size: big.length, kept: true },
      { slot: 2, filename: 'more.bin', content_type: null, attachment_type: 'event.attachment', size: big.length, kept: false, dropped: 'too_large' },
    ]);

    // a member downloads them: always a download, never the page the file says it is
    const org = (await ctx.runtime.stores.projects.get(Number(id)))!.org_id;
    await ctx.runtime.accounts.addUser({ org, email: `m${id}@acme.test`, role: 'member', password: 'a long member password' });
    const signIn = await call(ctx, 'POST', '/api/dashboard/session', { body: { email: `m${id}@acme.test`, password: 'a long member password' } });
    const cookie = sessionCookie(signIn);
    const download = (slot: string) => fetch(`${ctx.api}/api/dashboard/projects/${id}/issues/${issue.id}/events/${event}/attachments/${slot}`, { headers: { cookie } });
    const html = await download('0');
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toBe('application/octet-stream');
    expect(html.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''page.html");
    expect(html.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await html.arrayBuffer())).toEqual(log);
    expect(Buffer.from(await (await download('1')).arrayBuffer()).equals(big)).toBe(true);
    expect((await download('2')).status).toBe(404);
    expect((await download('9')).status).toBe(404);
    expect((await download('x')).status).toBe(404);
    expect((await fetch(`${ctx.api}/api/dashboard/projects/${id}/issues/${issue.id}/events/${event}/attachments/0`)).status).toBe(401);
  });
});

describe('every item type, and the ingestion counts', () => {
  const TYPES = ['profile', 'profile_chunk', 'replay_event', 'replay_recording', 'replay_video', 'statsd', 'metric_buckets', 'made_up_2031'];
  // feedback, user_report, attachment and check_in are kept (tests above, test/monitors.test.ts), and so are traces and logs
  // (test/traces.test.ts: these four, with nothing usable in them, are dropped with their reasons); these are acknowledged and counted
  const TRACE_KINDS = ['transaction', 'span', 'log', 'otel_log'];

  it('an envelope holding every item type and one not yet invented is answered 200, and each item is counted', async () => {
    const p = await makeProject(ctx);
    const id = p.project.id;
    const now = new Date().toISOString();
    const event = { event_id: eventId(), message: 'every type' };
    const envelope = lines(
      { event_id: event.event_id, sent_at: now },
      { type: 'event' },
      event,
      { type: 'session' },
      { sid: crypto.randomUUID(), started: now, status: 'ok', attrs: { release: 'all@1' } },
      { type: 'client_report' },
      { timestamp: Date.now() / 1000, discarded_events: [{ reason: 'queue_overflow', category: 'error', quantity: 3 }, { reason: 'sample_rate', category: 'transaction', quantity: 7 }] },
      ...[...TYPES, ...TRACE_KINDS].flatMap((type) => [{ type }, { whatever: type }]),
      // a check-in naming no monitor cannot be used
      { type: 'check_in' },
      { whatever: 'check_in' },
      { type: 'event' },
      { event_id: 'not-an-id', exception: 'not an exception', message: 42, timestamp: 'long ago' },
      { type: 'session' },
      { sid: 'bad', status: 'ok' },
    );
    const res = await send(`/api/${id}/envelope/?sentry_key=${p.publicKey}`, envelope);
    expect(res.status).toBe(200);
    expect(res.body.dropped).toEqual([...TYPES, ...TRACE_KINDS, 'check_in', 'session']);
    await ctx.runtime.ingestStats.flush();
    const counts = (await call(ctx, 'GET', '/api/v1/ingestion', { key: p.secret })).body;
    // the event with nothing usable but its place is kept as "event without message", its bad parts taken out
    expect(counts.accepted).toEqual({ event: 2, session: 1, client_report: 1 });
    expect(counts.dropped).toEqual(
      expect.arrayContaining([
        ...TYPES.map((type) => ({ type, reason: 'not_kept', count: 1 })),
        { type: 'transaction', reason: 'missing_ids', count: 1 },
        { type: 'span', reason: 'missing_ids', count: 1 },
        { type: 'log_item', reason: 'invalid', count: 2 },
        { type: 'session', reason: 'invalid', count: 1 },
        { type: 'check_in', reason: 'invalid', count: 1 },
        { type: 'error', reason: 'client_queue_overflow', count: 3 },
        { type: 'transaction', reason: 'client_sample_rate', count: 7 },
      ]),
    );
    expect(counts.hourly).toHaveLength(24);
    expect(counts.hourly.at(-1)).toMatchObject({ accepted: 4, dropped: TYPES.length + TRACE_KINDS.length + 2 + 10 });
    expect((await call(ctx, 'GET', '/api/v1/ingestion?range=14d', { key: p.secret })).body.hourly).toHaveLength(14 * 24);
    const metrics = await (await fetch(`${ctx.api}/metrics`)).text();
    expect(metrics).toMatch(/lookout_ingest_dropped_total\{[^}]*type="other"[^}]*reason="not_kept"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/lookout_ingest_dropped_total\{[^}]*type="transaction"[^}]*reason="client_sample_rate"[^}]*\} 7/);
  });
});

describe('the real @sentry/node SDK (10.x) pointed at a loopback DSN', () => {
  it('its request sessions and explicit session land in the rollups, and captureException creates an issue', async () => {
    const p = await makeProject(ctx);
    const out = await runSentryApp(ctx, 'sentry-app.mjs', { publicKey: p.publicKey, id: p.project.id });
    expect(out).toContain('"flushed":true');
    await drained(ctx);
    const release = (await call(ctx, 'GET', `/api/v1/releases/${encodeURIComponent('sentry-app@1.0.0')}`, { key: p.secret })).body;
    // Four request sessions (aggregates; one errored), the process session the SDK starts
    // at init (processSessionIntegration, ended by startSession) and the explicit one;
    // both of the latter carry the user set with setUser.
    expect(release).toMatchObject({
      environment: 'sdk-test',
      sessions: { total: 6, ok: 5, errored: 1, abnormal: 0, crashed: 0 },
      users: { total: 1, ok: 1 },
      crash_free_sessions: 1,
      crash_free_users: 1,
    });
    const { stored, recounted } = await rollupsAndRecount(ctx, Number(p.project.id));
    expect(stored).toEqual(recounted);
    const issues = (await call(ctx, 'GET', '/api/v1/issues', { key: p.secret })).body.issues;
    expect(issues.map((i: { exception_type: string }) => i.exception_type).sort()).toEqual(['Error', 'SyntaxError', 'TypeError']);
    expect(issues.every((i: { last_release: string }) => i.last_release === 'sentry-app@1.0.0')).toBe(true);

    // What the SDK gathered reaches the stored event: breadcrumbs, setContext, setTag, setUser, source lines.
    const typeError = issues.find((i: { exception_type: string }) => i.exception_type === 'TypeError');
    expect(typeError.culprit).toBe('sentry-app in priceOf');
    const event = (await call(ctx, 'GET', `/api/v1/issues/${typeError.id}`, { key: p.secret })).body.latest_event;
    expect(event.breadcrumbs.values).toContainEqual(expect.objectContaining({ category: 'cart', message: 'added an item', data: { sku: 'A-1', token: '[Filtered]' } }));
    expect(event.contexts.order).toEqual({ id: 'o-7', total: 12.5 });
    expect(event.contexts.runtime).toMatchObject({ name: 'node' });
    expect(event.tags).toMatchObject({ company: 'acme-gmbh' });
    expect(typeError.companies).toEqual(['acme-gmbh']);
    expect(event.user).toMatchObject({ id: 'user-42' });
    const frames = event.exception.values.at(-1).stacktrace.frames;
    const thrower = frames.find((f: { function?: string }) => f.function === 'priceOf');
    expect(thrower).toMatchObject({ in_app: true, context_line: expect.stringContaining('return cart.lines.total') });
    expect(thrower.pre_context.join('\n')).toContain('function priceOf(cart)');
    expect(event.exception.values.at(-1).mechanism).toMatchObject({ handled: true });
  }, 30_000);
});
