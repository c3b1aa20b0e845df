/**
 * Traces and logs as sent by hand (issue 69): bad items are dropped or repaired and counted with their reason while
 * the envelope's other items are kept; quotas count transactions, spans and log lines and answer
 * X-Sentry-Rate-Limits by category; what is kept is scrubbed as error events are.
 */
import { expect, it } from 'vitest';
import { boundProject, call, drained, eventId, everythingStored, type TestContext } from './helpers/context.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
withWorkers(['events', 'sessions'], (c) => (ctx = c), { TRACE_SAMPLE_PERCENT: '100' });

const now = () => Date.now() / 1000;
const hex = (n: number) => eventId().slice(0, n);

/** A transaction of `ms` ending now, with `spans` child spans. */
function transaction(extra: Record<string, unknown> = {}, spans = 1, ms = 50) {
  const trace = hex(32);
  const span = hex(16);
  const end = now();
  return {
    event_id: eventId(),
    type: 'transaction',
    transaction: 'GET /cart',
    transaction_info: { source: 'route' },
    start_timestamp: end - ms / 1000,
    timestamp: end,
    contexts: { trace: { trace_id: trace, span_id: span, op: 'http.server', status: 'ok' } },
    spans: Array.from({ length: spans }, (_, i) => ({ span_id: i.toString(16).padStart(16, '0'), parent_span_id: span, trace_id: trace, op: 'db', description: `SELECT ${i}`, start_timestamp: end - 0.01, timestamp: end })),
    ...extra,
  };
}

/** An envelope of `items` ([header, payload] pairs). */
function envelope(items: [Record<string, unknown>, unknown][], header: Record<string, unknown> = {}): string {
  return [JSON.stringify({ sent_at: new Date().toISOString(), ...header }), ...items.flatMap(([h, p]) => [JSON.stringify(h), JSON.stringify(p)])].join('\n');
}

async function send(p: { id: number; publicKey: string }, body: string) {
  const res = await fetch(`${ctx.api}/api/${p.id}/envelope/?sentry_key=${p.publicKey}`, { method: 'POST', body });
  return { status: res.status, body: await res.json(), limits: res.headers.get('x-sentry-rate-limits') };
}

it('bad items are dropped or repaired and counted by reason; the other items of the envelope are kept', async () => {
  const p = await boundProject(ctx);
  const ok = transaction({}, 1005);
  const line = (body: string, attributes: Record<string, unknown> = {}) => ({ timestamp: now(), level: 'info', body, trace_id: hex(32), attributes });
  const res = await send(
    p,
    envelope([
      [{ type: 'transaction' }, ok],
      [{ type: 'transaction' }, transaction({ timestamp: now() - 60 })], // ends before it starts
      [{ type: 'span' }, { trace_id: hex(32), start_timestamp: now(), timestamp: now() }], // no span id
      [{ type: 'log', item_count: 3 }, { items: [line('a'), line('b')] }], // two lines, not three
      [{ type: 'log', item_count: 2 }, { items: [line('kept', { odd: { type: 'array', value: [1] }, ok: { type: 'string', value: 'y' } }), line('kept too')] }],
      [{ type: 'event' }, { event_id: eventId(), message: 'an error beside them' }],
    ]),
  );
  expect(res.status).toBe(200);
  expect(res.body.dropped).toEqual(['transaction', 'span', 'log']);
  await drained(ctx);
  await ctx.runtime.ingestStats.flush();
  const counts = (await p.get('/ingestion')).body;
  // spans count the transaction's own and its children kept, as Relay counts them
  expect(counts.accepted).toMatchObject({ transaction: 1, span: 1001, log_item: 2, event: 1 });
  expect(counts.dropped).toEqual(
    expect.arrayContaining([
      { type: 'transaction', reason: 'invalid_timestamps', count: 1 },
      { type: 'span', reason: 'missing_ids', count: 1 },
      { type: 'log_item', reason: 'invalid_item_count', count: 1 },
    ]),
  );
  // the kept transaction: its spans past 1,000 trimmed and noted; the line's attribute of an unknown type left out
  const trace = (await p.get(`/traces/${ok.contexts.trace.trace_id}`)).body;
  expect(trace.transactions[0].spans).toHaveLength(1000);
  expect(trace.transactions[0].notes).toEqual({ spans_trimmed: 5 });
  const logs = (await p.get('/logs?q=kept')).body.lines;
  expect(logs.map((l: { body: string }) => l.body).sort()).toEqual(['kept', 'kept too']);
  expect(logs.find((l: { body: string }) => l.body === 'kept')).toMatchObject({ attrs: { ok: 'y' }, dropped_attributes: 1 });
  expect((await p.get('/issues')).body.total).toBe(1);
});

it('quotas count transactions, spans and log lines; over one, its category is named in X-Sentry-Rate-Limits', async () => {
  const p = await boundProject(ctx);
  await ctx.runtime.admin.setProject(p.id, { quotas: { transactions_per_minute: 2, log_items_per_minute: 3 } });
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 10_000) await new Promise((r) => setTimeout(r, left + 50));
  for (let i = 0; i < 2; i++) expect((await send(p, envelope([[{ type: 'transaction' }, transaction()]]))).status).toBe(200);
  const over = await send(p, envelope([[{ type: 'transaction' }, transaction()]]));
  expect(over.status).toBe(429);
  expect(over.limits).toMatch(/^\d+:transaction:project:quota_minute$/);
  // beside an error event, the transaction over its quota is named and the event kept
  const mixed = await send(p, envelope([[{ type: 'transaction' }, transaction()], [{ type: 'event' }, { event_id: eventId(), message: 'kept' }]]));
  expect(mixed.status).toBe(200);
  expect(mixed.limits).toMatch(/^\d+:transaction:project:quota_minute$/);
  // log lines count one by one: a container of 4 is over a quota of 3
  const logs = await send(p, envelope([[{ type: 'log', item_count: 4 }, { items: Array.from({ length: 4 }, (_, i) => ({ timestamp: now(), level: 'info', body: `line ${i}` })) }]]));
  expect(logs.status).toBe(429);
  expect(logs.limits).toMatch(/^\d+:log_item:project:quota_minute$/);
  await ctx.runtime.ingestStats.flush();
  const counts = (await call(ctx, 'GET', '/api/v1/ingestion', { key: p.secret, instance: p.instance })).body;
  expect(counts.dropped).toEqual(expect.arrayContaining([{ type: 'transaction', reason: 'quota_minute', count: 2 }, { type: 'log_item', reason: 'quota_minute', count: 4 }]));
});

it('a transaction and log lines are scrubbed as an error event is', async () => {
  const p = await boundProject(ctx);
  const tx = transaction({ request: { url: 'https://shop.example/pay?card=4111111111111111' } });
  tx.spans[0]!.description = 'UPDATE cards SET number = 4111 1111 1111 1111';
  (tx.spans[0] as Record<string, unknown>).data = { password: 'hunter2' };
  const res = await send(
    p,
    envelope([
      [{ type: 'transaction' }, tx],
      [{ type: 'log', item_count: 1 }, { items: [{ timestamp: now(), level: 'warn', body: 'charged 4111-1111-1111-1111', attributes: { api_token: { type: 'string', value: 'tok-abc-123' } } }] }],
    ]),
  );
  expect(res.status).toBe(200);
  await drained(ctx);
  const stored = await everythingStored(ctx);
  for (const secret of ['4111111111111111', '4111 1111 1111 1111', '4111-1111-1111-1111', 'hunter2', 'tok-abc-123']) expect(stored).not.toContain(secret);
  const trace = (await p.get(`/traces/${tx.contexts.trace.trace_id}`)).body;
  expect(trace.transactions[0].spans[0].description).toBe('UPDATE cards SET number = [Filtered]');
});
