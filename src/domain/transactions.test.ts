import { describe, expect, it } from 'vitest';
import { isFailure, MAX_SPANS, readSpanItem, readTime, readTransaction, sampleRateOf, TraceItemError } from './transactions.ts';

const now = new Date('2026-11-29T12:00:00Z');
const T = 'a'.repeat(32);
const S = 'b'.repeat(16);
const at = (iso: string) => Date.parse(iso) / 1000;

function tx(extra: Record<string, unknown> = {}) {
  return {
    type: 'transaction',
    event_id: 'c'.repeat(32),
    transaction: 'GET /users/:id',
    transaction_info: { source: 'route' },
    start_timestamp: at('2026-11-29T11:59:00Z'),
    timestamp: at('2026-11-29T11:59:00.250Z'),
    contexts: { trace: { trace_id: T, span_id: S, op: 'http.server', status: 'ok', data: { 'http.request.method': 'GET' } } },
    spans: [{ span_id: '1'.repeat(16), parent_span_id: S, trace_id: T, op: 'db.query', description: 'SELECT 1', start_timestamp: at('2026-11-29T11:59:00.010Z'), timestamp: at('2026-11-29T11:59:00.020Z') }],
    ...extra,
  };
}

describe('times', () => {
  it.each([
    [1795953540.25, 1795953540250],
    ['2026-11-29T11:59:00.250Z', 1795953540250],
    // sentry-go: nanoseconds; sentry-python: microseconds; an offset; no zone (UTC)
    ['2026-11-29T11:59:00.250123456Z', 1795953540250],
    ['2026-11-29T11:59:00.250123Z', 1795953540250],
    ['2026-11-29T12:59:00.250+01:00', 1795953540250],
    ['2026-11-29T11:59:00.250', 1795953540250],
    ['yesterday', null],
    [-1, null],
    [null, null],
  ])('%s → %s', (v, ms) => expect(readTime(v)).toBe(ms));
});

describe('a transaction', () => {
  it('is read into its record', () => {
    const r = readTransaction(tx(), { now, traceHeader: { sample_rate: '0.25', sampled: 'true' } });
    expect(r).toMatchObject({ trace_id: T, span_id: S, name: 'GET /users/:id', op: 'http.server', method: 'GET', status: 'ok', failed: false, environment: 'production', sample_rate: 0.25 });
    expect(r.end - r.start).toBe(250);
    expect(r.spans).toEqual([{ span_id: '1'.repeat(16), parent_span_id: S, op: 'db.query', description: 'SELECT 1', start: r.start + 10, end: r.start + 20, status: null }]);
  });

  it('named by its URL is grouped by its parameterised path', () => {
    expect(readTransaction(tx({ transaction: 'GET /orders/1234?x=1', transaction_info: { source: 'url' } }), { now }).name).toBe('GET /orders/*');
  });

  it('takes its status from the HTTP status when the trace has none, and fails on server errors', () => {
    const r = readTransaction(tx({ contexts: { trace: { trace_id: T, span_id: S }, response: { status_code: 503 } } }), { now });
    expect(r).toMatchObject({ status: 'unavailable', failed: true, http_status: 503 });
  });

  it('keeps the envelope header event id, trims spans past the cap and leaves out spans without ids', () => {
    const spans = Array.from({ length: MAX_SPANS + 5 }, (_, i) => ({ span_id: i === 0 ? 'nope' : i.toString(16).padStart(16, '0'), start_timestamp: 1, timestamp: 2 }));
    const r = readTransaction(tx({ spans }), { now, eventId: 'D'.repeat(32) });
    expect(r.event_id).toBe('d'.repeat(32));
    expect(r.spans).toHaveLength(MAX_SPANS - 1);
    expect(r.notes).toEqual({ spans_trimmed: 5, spans_invalid: 1 });
  });

  it('keeps the vitals it measured', () => {
    const r = readTransaction(tx({ measurements: { lcp: { value: 1800, unit: 'millisecond' }, cls: { value: 0.02, unit: '' }, fp: { value: 3 }, inp: { value: 90_000 } } }), { now });
    expect(r.vitals).toEqual({ lcp: 1800, cls: 0.02 });
  });

  it.each([
    ['ends before it starts', { timestamp: at('2026-11-29T11:58:00Z') }, 'invalid_timestamps'],
    ['has no times', { start_timestamp: 'soon' }, 'invalid_timestamps'],
    ['ends in the future', { start_timestamp: at('2026-11-29T12:10:00Z'), timestamp: at('2026-11-29T12:10:01Z') }, 'invalid_timestamps'],
    ['is older than the kept minutes', { start_timestamp: at('2026-11-01T00:00:00Z'), timestamp: at('2026-11-01T00:00:01Z') }, 'too_old'],
    ['has no trace id', { contexts: { trace: { span_id: S } } }, 'missing_ids'],
  ])('is dropped when it %s', (_, extra, reason) => {
    expect(() => readTransaction(tx(extra), { now })).toThrow(expect.objectContaining({ reason }) as TraceItemError);
  });
});

describe('statuses and sample rates', () => {
  it.each([
    ['ok', false],
    ['cancelled', false],
    ['unknown', false],
    ['internal_error', true],
    ['deadline_exceeded', true],
    ['not_found', true],
  ])('%s fails: %s', (status, failed) => expect(isFailure(status)).toBe(failed));
  it.each([
    [{ sample_rate: '0.1' }, 0.1],
    [{ sample_rate: '1' }, 1],
    [{ sample_rate: '0' }, null],
    [{ sample_rate: 'x' }, null],
    [{}, null],
    [undefined, null],
  ])('%j → %s', (header, rate) => expect(sampleRateOf(header)).toBe(rate));
});

describe('span items', () => {
  const base = { trace_id: T, span_id: S, start_timestamp: at('2026-11-29T11:59:00Z'), timestamp: at('2026-11-29T11:59:01Z') };
  it('an INP span adds its vital to its page', () => {
    const [s] = readSpanItem({ ...base, op: 'ui.interaction.click', measurements: { inp: { value: 240, unit: 'millisecond' } }, data: { transaction: '/checkout', 'sentry.release': 'web@1' } }, { now });
    expect(s).toEqual({ kind: 'vital', trace_id: T, page: '/checkout', environment: 'production', release: 'web@1', at: base.timestamp * 1000, vitals: { inp: 240 } });
  });
  it('a v2 container: the segment becomes a transaction with its children, a lone span is counted', () => {
    const child = { trace_id: T, span_id: '2'.repeat(16), parent_span_id: S, segment_id: S, name: 'SELECT 1', start_timestamp: base.start_timestamp, end_timestamp: base.timestamp, attributes: { 'sentry.op': { type: 'string', value: 'db' } } };
    const root = { trace_id: T, span_id: S, segment_id: S, is_segment: true, name: 'GET /x', status: 'error', start_timestamp: base.start_timestamp, end_timestamp: base.timestamp, attributes: { 'sentry.op': { type: 'string', value: 'http.server' } } };
    const lone = { trace_id: T, span_id: '3'.repeat(16), start_timestamp: 1, end_timestamp: 2 };
    const out = readSpanItem({ items: [child, root, lone] }, { now });
    expect(out.filter((s) => s.kind === 'counted')).toHaveLength(1);
    const t = out.find((s) => s.kind === 'transaction');
    expect(t?.kind === 'transaction' && t.transaction).toMatchObject({ name: 'GET /x', op: 'http.server', status: 'internal_error', failed: true, spans: [{ op: 'db', description: 'SELECT 1' }] });
  });
  it('a span without ids is dropped', () => {
    expect(() => readSpanItem({ ...base, span_id: undefined }, { now })).toThrow(expect.objectContaining({ reason: 'missing_ids' }) as TraceItemError);
  });
});
