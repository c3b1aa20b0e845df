/**
 * The trace and log index (issue 69): log chunks and trace-error documents numbered per minute and samples listed
 * under their trace, so the trace page and the Logs page read by `_id` (FerretDB v1 scans a whole collection for an
 * `_id` range). A group numbered twice (a job run again, two deliveries at once) keeps one number; the index's reads
 * give what the range reads give.
 */
import { expect, it } from 'vitest';
import { projectKeys } from '../src/state/scripts.ts';
import { boundProject, drained, eventId, type TestContext } from './helpers/context.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
withWorkers(['events', 'sessions'], (c) => (ctx = c), { TRACE_SAMPLE_PERCENT: '100' });

const MINUTE = 60_000;

it('a group keeps its number however often and however concurrently it is numbered; other groups get their own', async () => {
  const state = ctx.runtime.tracesState;
  const project = 900_000 + Math.floor(Math.random() * 1000);
  const minute = Math.floor(Date.now() / MINUTE) * MINUTE;
  const groups = Array.from({ length: 20 }, (_, i) => ({ minute: minute - (i % 3) * MINUTE, group: `g${i}` }));
  // every group numbered by five callers at once, each asking for all of them
  const answers = await Promise.all(Array.from({ length: 5 }, () => state.number('tl', project, groups, Date.now())));
  for (const a of answers) expect(a).toEqual(answers[0]);
  // within each minute the numbers differ, and a later call gives the same ones
  for (const m of [0, 1, 2]) {
    const numbers = answers[0]!.filter((_, i) => i % 3 === m);
    expect(new Set(numbers).size).toBe(numbers.length);
  }
  expect(await state.number('tl', project, groups.slice(5, 9), Date.now())).toEqual(answers[0]!.slice(5, 9));
  // the counts cover every number given (numbers lost in a race are gaps below them)
  const counts = await state.counts('tl', project, minute - 2 * MINUTE, minute + MINUTE);
  groups.forEach((g, i) => expect(counts.get(g.minute)!).toBeGreaterThanOrEqual(answers[0]![i]!));
  expect(await state.counts('te', project, minute - 2 * MINUTE, minute + MINUTE)).toEqual(new Map());
});

it('the trace page and the Logs page read the same through the index as by range', async () => {
  const p = await boundProject(ctx);
  const trace = eventId();
  const span = eventId().slice(0, 16);
  const end = Date.now() / 1000;
  const envelope = (items: [Record<string, unknown>, unknown][]) => [JSON.stringify({}), ...items.flatMap(([h, b]) => [JSON.stringify(h), JSON.stringify(b)])].join('\n');
  const line = (body: string, t: string | undefined) => ({ timestamp: end, level: 'info', body, ...(t && { trace_id: t }), attributes: {} });
  const body = envelope([
    [
      { type: 'transaction' },
      {
        event_id: eventId(),
        type: 'transaction',
        transaction: 'POST /checkout',
        start_timestamp: end - 0.2,
        timestamp: end,
        contexts: { trace: { trace_id: trace, span_id: span, op: 'http.server', status: 'internal_error' } },
        spans: [{ span_id: '1'.padStart(16, '0'), parent_span_id: span, trace_id: trace, op: 'db', description: 'SELECT 1', start_timestamp: end - 0.1, timestamp: end }],
      },
    ],
    [{ type: 'log', item_count: 3 }, { items: [line('paid', trace), line('other request', eventId()), line('no trace', undefined)] }],
    [{ type: 'event' }, { event_id: eventId(), message: 'card declined', contexts: { trace: { trace_id: trace, span_id: span } } }],
  ]);
  for (let i = 0; i < 2; i++) expect((await fetch(`${ctx.api}/api/${p.id}/envelope/?sentry_key=${p.publicKey}`, { method: 'POST', body })).status).toBe(200);
  await drained(ctx);
  const perf = ctx.runtime.performance;
  const window = { from: Date.now() - 30 * MINUTE, to: Date.now() + MINUTE };
  const read = async () => ({ trace: await perf.trace(p.id, trace), logs: await perf.logs(p.id, window, {}), ofTrace: await perf.logs(p.id, window, { trace }) });
  // the index began with these writes: the windows reach before it, and are read by range
  const byRange = await read();
  expect(byRange.trace).toMatchObject({ sampled: true, transactions: [{ trace_id: trace }], errors: [{ issue: expect.any(Number) }], logs: [{ body: 'paid' }, { body: 'paid' }] });
  expect(byRange.logs.lines).toHaveLength(6);
  // as if the index had begun an hour ago: the same windows are read through it
  await ctx.runtime.queues.connection.set(`${projectKeys(ctx.runtime.config.queuePrefix, p.id).base}tix`, String(Date.now() - 60 * MINUTE));
  const indexed = await ctx.runtime.tracesState.counts('tl', p.id, window.from, window.to);
  expect([...indexed.values()].reduce((a, b) => a + b, 0)).toBe(2);
  expect(await read()).toEqual(byRange);
});
