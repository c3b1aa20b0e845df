/**
 * Before an API process takes requests it rehearses taking events (issue 66: a fresh instance's first burst). V8
 * compiles a function for speed only once it has run many times, so a fresh process took the first 120 error events
 * sent at once in about twice the time of the same burst later, and a fresh start's first seconds of transactions
 * and sessions queued likewise (issue 69). The rehearsal runs the work of taking each kind that is this process' own
 * (parsing, normalising, scrubbing, checking against the schema, fingerprinting, packing, the job's entry) on items
 * shaped as SDKs send them: native error events, sign-in attempts and sessions, and envelopes of an error event, a
 * session, a transaction and a log container. It writes nothing and counts nothing. What it saves and costs, measured:
 * docs/decisions.md ("An API process rehearses taking events before it listens").
 */
import type { EventsService } from './events.service.ts';
import type { SentryService } from './sentry.service.ts';
import type { SessionsService } from './sessions.service.ts';

type Rehearsing = { events: Pick<EventsService, 'rehearse'>; sessions: Pick<SessionsService, 'rehearse'>; sentry: Pick<SentryService, 'rehearse'> };

const WORDS = ['order', 'invoice', 'payment', 'stock', 'customer', 'ledger', 'report', 'export'];
const word = (i: number) => WORDS[i % WORDS.length]!;
/** The `i`th id of a kind (`pad` tells kinds apart), `width` hex digits. */
const hexId = (i: number, width: number, pad: string) => (i + 1).toString(16).padStart(width, pad);

/** An error event as a server SDK sends one: 20 frames (the last three in the app, with source and variables), 20 breadcrumbs. */
function errorEvent(i: number, at: Date): Record<string, unknown> {
  const frames = Array.from({ length: 20 }, (_, f) =>
    f < 17
      ? { filename: `lib/site-packages/web/h${f}.py`, function: `handle${f}`, lineno: 40 + f, in_app: false }
      : {
          filename: `app/${word(i)}/${word(f)}.py`,
          function: `${word(f)}_lookup`,
          module: `app.${word(i)}.${word(f)}`,
          lineno: 40 + f,
          in_app: true,
          pre_context: [`def ${word(f)}_lookup(key):`],
          context_line: `    return ${word(i)}.get(key)["${word(f + 1)}"]`,
          post_context: [''],
          vars: { key: `${1000 + f}`, retries: f % 3 },
        },
  );
  return {
    event_id: hexId(i, 32, '0'),
    timestamp: at.toISOString(),
    platform: 'python',
    level: 'error',
    logger: `app.${word(i)}`,
    server_name: 'web-1',
    release: 'app@1.0.0',
    environment: 'production',
    transaction: `/${word(i)}/${word(i + 1)}`,
    exception: { values: [{ type: `${word(i)}Error`, value: `${word(i + 2)} not found for ${word(i + 3)} ${i}`, mechanism: { type: 'framework', handled: false }, stacktrace: { frames } }] },
    breadcrumbs: { values: Array.from({ length: 20 }, (_, b) => ({ timestamp: at.getTime() / 1000 - 20 + b, category: 'http', message: `GET /${word(b)}` })) },
    request: { url: `https://shop.example.com/${word(i)}?page=${i}`, method: 'POST', headers: { 'User-Agent': 'Mozilla/5.0', Cookie: 'session=rehearsal' } },
    user: { id: String(i), email: `user${i}@example.com`, ip_address: '192.0.2.1' },
    tags: { company: 'rehearsal', region: 'eu' },
    contexts: { runtime: { name: 'CPython', version: '3.12.3' }, os: { name: 'Linux' } },
  };
}

/** A transaction as a server SDK sends one with tracing on: a route, its middleware, six of one query, an outgoing call. */
function transaction(i: number, at: Date): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const trace = hexId(i, 32, 'c');
  const root = hexId(i, 16, 'd');
  const end = at.getTime() / 1000;
  const start = end - 0.05 - (i % 7) / 100;
  const spans = Array.from({ length: 20 }, (_, k) => {
    const op = k < 6 ? 'db.query' : k === 6 ? 'http.client' : k % 2 ? 'middleware.koa' : 'function';
    const description = k < 6 ? `SELECT * FROM ${word(i)} WHERE id = ${i} AND line = ${k}` : k === 6 ? `GET http://inventory.internal/${word(k)}/${i}` : `handler ${word(k)}`;
    const s = start + ((end - start) * k) / 20;
    return { span_id: hexId(i * 20 + k, 16, 'e'), parent_span_id: root, trace_id: trace, op, description, start_timestamp: s, timestamp: s + (end - start) / 20, status: 'ok', data: { 'sentry.op': op } };
  });
  const route = `/api/${word(i)}/:id`;
  const header = { trace_id: trace, public_key: 'rehearsal', sample_rate: '1', sampled: 'true', environment: 'production', release: 'app@1.0.0' };
  const payload = {
    type: 'transaction',
    transaction: `GET ${route}`,
    transaction_info: { source: 'route' },
    start_timestamp: start,
    timestamp: end,
    release: 'app@1.0.0',
    environment: 'production',
    platform: 'node',
    contexts: { trace: { trace_id: trace, span_id: root, op: 'http.server', status: i % 50 ? 'ok' : 'internal_error', data: { 'http.request.method': 'GET', 'http.route': route } }, response: { status_code: i % 50 ? 200 : 500 } },
    request: { method: 'GET', url: `https://shop.example.com/api/${word(i)}/${i}` },
    spans,
  };
  return { header, payload };
}

/** A log container of 25 lines as a JavaScript SDK sends it (version 2, typed attributes). */
function logContainer(i: number, at: Date): Record<string, unknown> {
  const items = Array.from({ length: 25 }, (_, k) => ({
    timestamp: at.getTime() / 1000,
    trace_id: hexId(i * 25 + k, 32, 'f'),
    level: k % 10 ? 'info' : 'warn',
    severity_number: k % 10 ? 9 : 13,
    body: `handled ${word(k)} ${i * 25 + k} in ${k * 3} ms`,
    attributes: {
      'sentry.environment': { type: 'string', value: 'production' },
      'sentry.release': { type: 'string', value: 'app@1.0.0' },
      'sentry.trace.parent_span_id': { type: 'string', value: hexId(k, 16, 'a') },
      customer: { type: 'integer', value: k },
    },
  }));
  return { version: 2, items };
}

const STATUSES = ['ok', 'ok', 'ok', 'exited', 'errored', 'crashed', 'abnormal'];

/** A session as an installation posts it to the native endpoint. */
function session(i: number, at: Date): Record<string, unknown> {
  return { sid: hexId(i, 32, '5'), did: `user-${i % 40}`, release: 'app@1.0.0', environment: 'production', status: STATUSES[i % STATUSES.length], started: at.toISOString() };
}

/** A session update as a browser SDK sends it in an envelope. */
function sentrySession(i: number, at: Date): Record<string, unknown> {
  return { sid: hexId(i, 32, '6'), did: `user-${i % 40}`, init: i % 2 === 0, started: at.toISOString(), timestamp: at.toISOString(), status: i % 2 ? 'exited' : 'ok', errors: i % 5 === 0 ? 1 : 0, attrs: { release: 'app@1.0.0', environment: 'production' } };
}

/** An envelope of these items (each `[type, payload]`), with a trace header when given. */
function envelope(eventId: string, at: Date, items: [string, unknown][], trace?: Record<string, unknown>): Buffer {
  const lines = [JSON.stringify({ event_id: eventId, sent_at: at.toISOString(), ...(trace ? { trace } : {}) })];
  for (const [type, payload] of items) {
    const text = JSON.stringify(payload);
    const count = type === 'log' ? { item_count: (payload as { items: unknown[] }).items.length, content_type: 'application/vnd.sentry.items.log+json' } : {};
    lines.push(JSON.stringify({ type, length: Buffer.byteLength(text), ...count }), text);
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

/**
 * Rehearses `rounds` rounds of one native error event, one sign-in attempt, a batch of five sessions and a single one,
 * and four envelopes (an error event, a session, a transaction, a log container); answers how long they
 * took (ms), or the error that stopped them (the API starts all the same: a rehearsal only saves time).
 */
export function rehearseIngest(deps: Rehearsing, rounds: number): { ms: number; error?: string } {
  const started = performance.now();
  try {
    rehearse(deps, rounds);
  } catch (err) {
    return { ms: performance.now() - started, error: (err as Error).message };
  }
  return { ms: performance.now() - started };
}

function rehearse(deps: Rehearsing, rounds: number): void {
  const at = new Date();
  for (let i = 0; i < rounds; i++) {
    deps.events.rehearse(JSON.parse(JSON.stringify(errorEvent(i, at))), at);
    const attempt = {
      event_id: hexId(i, 32, 'a'),
      timestamp: at.toISOString(),
      security: { kind: i % 3 ? 'login_failed' : 'login_succeeded', actor: `user${i % 40}@example.com`, ip: `198.51.100.${i % 250}`, outcome: 'wrong password' },
    };
    deps.events.rehearse(JSON.parse(JSON.stringify(attempt)), at);
    deps.sessions.rehearse({ sessions: Array.from({ length: 5 }, (_, k) => session(i * 5 + k, at)) }, at);
    deps.sessions.rehearse(session(i, at), at);
    deps.sentry.rehearse(envelope(hexId(i, 32, 'b'), at, [['event', { ...errorEvent(i, at), event_id: undefined }]]), at);
    deps.sentry.rehearse(envelope(hexId(i, 32, 'e'), at, [['session', sentrySession(i, at)]]), at);
    const tx = transaction(i, at);
    deps.sentry.rehearse(envelope(hexId(i, 32, 'c'), at, [['transaction', tx.payload]], tx.header), at);
    deps.sentry.rehearse(envelope(hexId(i, 32, 'd'), at, [['log', logContainer(i, at)]]), at);
  }
}
