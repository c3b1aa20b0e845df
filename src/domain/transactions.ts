/**
 * Transactions and spans as Sentry's SDKs send them (issue 69), read into the records Lookout keeps: a
 * `transaction` item (float-second or RFC 3339 times, the root span in `contexts.trace`, up to 1,000 child spans,
 * `measurements`), a standalone `span` item (v1: one span, how @sentry/browser sends INP) and a v2 span container
 * (`{items}`, span streaming). A record holds what the aggregates, the samples and the trace page use; the rest of
 * the event is not kept. Pure: the caller gives the time.
 *
 * What cannot be used throws a TraceItemError naming its reason (the item is dropped and counted by it); what can
 * be repaired is, and noted in the record's `notes` (spans past the cap trimmed, spans without ids left out).
 */
import { isObj, type Obj } from './obj.ts';
import { cutText, wellFormed } from './client-keys.ts';
import { parameterizePath } from './parameterize.ts';
import { VITAL_NAMES, type Vital } from './perf-math.ts';

export class TraceItemError extends Error {
  constructor(
    readonly reason: 'invalid_timestamps' | 'missing_ids' | 'invalid' | 'too_old',
    message: string,
  ) {
    super(message);
  }
}

/** Most child spans kept of one transaction (what the JavaScript SDK sends at most); more are trimmed and noted. */
export const MAX_SPANS = 1000;
/** A transaction or span further in the future than this is refused, as Relay refuses one. */
const FUTURE_MS = 5 * 60_000;
/** How old a transaction may be and still be counted: its minutes must still be kept. */
export const OLDEST_MS = 14 * 86_400_000;

export interface SpanRecord {
  span_id: string;
  parent_span_id: string | null;
  op: string;
  description: string | null;
  /** ms since the epoch */
  start: number;
  end: number;
  status: string | null;
}

export interface TransactionRecord {
  event_id: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  /** the group's name: the transaction's, or its parameterised path when it was named by a raw URL */
  name: string;
  source: string;
  op: string;
  method: string | null;
  environment: string;
  release: string | null;
  start: number;
  end: number;
  status: string;
  failed: boolean;
  http_status: number | null;
  /** web vitals in their own units (ms; CLS unitless) */
  vitals: Partial<Record<Vital, number>>;
  spans: SpanRecord[];
  platform: string | null;
  /** the user, for the sample (id, else email, else address) */
  user: string | null;
  /** the request's URL as sent (the sample shows it) */
  url: string | null;
  /** the trace's sample rate from the envelope's `trace` header (0–1), to estimate what was not sent */
  sample_rate: number | null;
  /** repairs made: spans trimmed past MAX_SPANS, spans left out without ids */
  notes: { spans_trimmed?: number; spans_invalid?: number };
}

/**
 * Span statuses that count as failures: every status but `ok`, `cancelled` and `unknown` (Sentry's failure
 * rate; an unknown status says nothing went wrong).
 */
const NOT_FAILED = new Set(['ok', 'cancelled', 'unknown']);
export const isFailure = (status: string) => !NOT_FAILED.has(status);

/** An HTTP status as the span status Sentry's SDKs would set. */
export function statusOfHttp(code: number): string {
  if (code < 400) return 'ok';
  const named: Record<number, string> = { 400: 'invalid_argument', 401: 'unauthenticated', 403: 'permission_denied', 404: 'not_found', 409: 'already_exists', 429: 'resource_exhausted', 499: 'cancelled', 501: 'unimplemented', 503: 'unavailable', 504: 'deadline_exceeded' };
  return named[code] ?? (code >= 500 ? 'internal_error' : 'invalid_argument');
}

/** A time as ms since the epoch: float seconds, or an RFC 3339 string (any fraction of a second); null otherwise. */
export function readTime(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v) && v > 0) return Math.round(v * 1000 * 1000) / 1000;
  if (typeof v === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?$/i.test(v)) {
    const ms = Date.parse(/[Z+-]\d\d:?\d\d$|Z$/i.test(v.slice(19)) ? v : `${v}Z`);
    return Number.isFinite(ms) ? ms : null;
  }
  return null;
}

const hexId = (v: unknown, length: number): string | null => {
  if (typeof v !== 'string') return null;
  const id = v.toLowerCase().replace(/-/g, '');
  return id.length === length && /^[0-9a-f]+$/.test(id) ? id : null;
};
export const traceIdOf = (v: unknown) => hexId(v, 32);
export const spanIdOf = (v: unknown) => hexId(v, 16);

const text = (v: unknown, max: number): string | null => (typeof v === 'string' && v !== '' ? cutText(wellFormed(v), max) : null);
const obj = (v: unknown): Obj => (isObj(v) ? v : {});

/** What the envelope says of the trace (its `trace` header): the sample rate, when it is one. */
export function sampleRateOf(traceHeader: unknown): number | null {
  const raw = isObj(traceHeader) ? traceHeader.sample_rate : undefined;
  const rate = typeof raw === 'string' ? Number(raw) : typeof raw === 'number' ? raw : NaN;
  return rate > 0 && rate <= 1 ? rate : null;
}

/** One child span, or null when it has no ids or no time (left out of its transaction). */
function readSpan(raw: unknown, traceId: string): SpanRecord | null {
  if (!isObj(raw)) return null;
  const span_id = spanIdOf(raw.span_id);
  const start = readTime(raw.start_timestamp);
  const end = readTime(raw.timestamp ?? raw.end_timestamp);
  if (!span_id || start === null || end === null) return null;
  if (raw.trace_id !== undefined && traceIdOf(raw.trace_id) !== traceId) return null;
  return {
    span_id,
    parent_span_id: spanIdOf(raw.parent_span_id),
    op: text(raw.op, 100) ?? text(obj(raw.data)['sentry.op'], 100) ?? 'default',
    description: text(raw.description ?? raw.name, 2000),
    start,
    end: Math.max(start, end),
    status: text(raw.status, 40),
  };
}

/** The vitals among a transaction's or span's `measurements` (`{lcp: {value, unit}}`). */
function readVitals(measurements: unknown): Partial<Record<Vital, number>> {
  const out: Partial<Record<Vital, number>> = {};
  const m = obj(measurements);
  for (const name of VITAL_NAMES) {
    const value = obj(m[name]).value;
    // values past a minute are an SDK's error (the JavaScript SDK drops INP over 60 s)
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0 && (name === 'cls' ? value < 100 : value <= 60_000)) out[name] = value;
  }
  return out;
}

function httpStatusOf(event: Obj, traceData: Obj): number | null {
  const code = obj(obj(event.contexts).response).status_code ?? traceData['http.response.status_code'] ?? traceData['http.status_code'];
  const n = typeof code === 'string' ? Number(code) : code;
  return typeof n === 'number' && Number.isInteger(n) && n >= 100 && n < 600 ? n : null;
}

function methodOf(event: Obj, traceData: Obj, name: string): string | null {
  const m = obj(event.request).method ?? traceData['http.request.method'] ?? traceData['http.method'] ?? /^([A-Z]{3,7}) \//.exec(name)?.[1];
  return typeof m === 'string' && /^[A-Za-z]{3,10}$/.test(m) ? m.toUpperCase() : null;
}

function userOf(user: unknown): string | null {
  const u = obj(user);
  return text(u.id === undefined ? undefined : String(u.id), 200) ?? text(u.email, 200) ?? text(u.username, 200) ?? text(u.ip_address, 64);
}

/** Checks a record's times against the clock: not before its start, not in the future, not past retention. */
function checkTimes(start: number | null, end: number | null, now: number): asserts end is number {
  if (start === null || end === null) throw new TraceItemError('invalid_timestamps', 'start_timestamp and timestamp must be float seconds or RFC 3339 times');
  if (end < start) throw new TraceItemError('invalid_timestamps', 'the transaction ends before it starts');
  if (end > now + FUTURE_MS) throw new TraceItemError('invalid_timestamps', 'the transaction ends in the future');
  if (end < now - OLDEST_MS) throw new TraceItemError('too_old', 'the transaction is older than the minutes Lookout keeps');
}

/**
 * A `transaction` item's event as a record. `eventId` is the envelope header's (it wins, as Relay's does);
 * `traceHeader` the envelope's `trace` header.
 */
export function readTransaction(raw: unknown, opts: { now: Date; eventId?: unknown; traceHeader?: unknown }): TransactionRecord {
  if (!isObj(raw)) throw new TraceItemError('invalid', 'a transaction must be a JSON object');
  const trace = obj(obj(raw.contexts).trace);
  const trace_id = traceIdOf(trace.trace_id);
  const span_id = spanIdOf(trace.span_id);
  if (!trace_id || !span_id) throw new TraceItemError('missing_ids', 'contexts.trace needs a trace_id (32 hex digits) and a span_id (16 hex digits)');
  const start = readTime(raw.start_timestamp);
  const end = readTime(raw.timestamp);
  checkTimes(start, end, opts.now.getTime());
  const data = obj(trace.data);
  const source = text(obj(raw.transaction_info).source, 40) ?? text(data['sentry.source'], 40) ?? 'unknown';
  const given = text(raw.transaction, 1000) ?? '<unnamed transaction>';
  const name = source === 'url' ? cutText(given.replace(/^([A-Z]{3,7} )?(.*)$/s, (_, m: string | undefined, u: string) => `${m ?? ''}${parameterizePath(u)}`), 1000) : given;
  const http_status = httpStatusOf(raw, data);
  const status = text(trace.status, 40) ?? (http_status === null ? 'ok' : statusOfHttp(http_status));
  const notes: TransactionRecord['notes'] = {};
  const rawSpans = Array.isArray(raw.spans) ? raw.spans : [];
  if (rawSpans.length > MAX_SPANS) notes.spans_trimmed = rawSpans.length - MAX_SPANS;
  const spans: SpanRecord[] = [];
  for (const s of rawSpans.slice(0, MAX_SPANS)) {
    const span = readSpan(s, trace_id);
    if (span) spans.push(span);
    else notes.spans_invalid = (notes.spans_invalid ?? 0) + 1;
  }
  const eventId = hexId(opts.eventId, 32) ?? hexId(raw.event_id, 32);
  if (!eventId) throw new TraceItemError('missing_ids', 'a transaction needs an event_id (32 hex digits)');
  return {
    event_id: eventId,
    trace_id,
    span_id,
    parent_span_id: spanIdOf(trace.parent_span_id),
    name,
    source,
    op: text(trace.op, 100) ?? 'default',
    method: methodOf(raw, data, given),
    environment: text(raw.environment, 64) ?? 'production',
    release: text(raw.release, 200),
    start: start!,
    end,
    status,
    failed: isFailure(status),
    http_status,
    vitals: readVitals(raw.measurements),
    spans,
    platform: text(raw.platform, 64),
    user: userOf(raw.user),
    url: text(obj(raw.request).url, 2000) ?? text(data['url.full'] ?? data['http.url'], 2000),
    sample_rate: sampleRateOf(opts.traceHeader),
    notes,
  };
}

/** A standalone span as Lookout keeps it: a web vital of a page (INP), or a segment's transaction. */
export type StandaloneSpan =
  | { kind: 'vital'; trace_id: string; page: string; environment: string; release: string | null; at: number; vitals: Partial<Record<Vital, number>> }
  | { kind: 'transaction'; transaction: TransactionRecord }
  | { kind: 'counted' };

/**
 * A `span` item's spans: a v1 item holds one span, a v2 item `{items: [...]}`. A span that carries web vitals
 * (INP, sent when the page is hidden) adds them to its page; a segment's root span (`is_segment`, or a v2 span
 * whose segment is itself) becomes a transaction with the container's other spans of that segment as its children;
 * any other span is counted only. A span without ids is dropped by the caller with `missing_ids`.
 */
export function readSpanItem(payload: unknown, opts: { now: Date; traceHeader?: unknown }): StandaloneSpan[] {
  const items = isObj(payload) && Array.isArray(payload.items) ? payload.items : [payload];
  const out: StandaloneSpan[] = [];
  const bySegment = new Map<string, Obj[]>();
  for (const raw of items) {
    if (!isObj(raw)) throw new TraceItemError('invalid', 'a span must be a JSON object');
    const trace_id = traceIdOf(raw.trace_id);
    const span_id = spanIdOf(raw.span_id);
    if (!trace_id || !span_id) throw new TraceItemError('missing_ids', 'a span needs a trace_id (32 hex digits) and a span_id (16 hex digits)');
    const attrs = attributesOf(raw);
    const vitals = { ...readVitals(raw.measurements), ...vitalsOfAttributes(attrs) };
    if (Object.keys(vitals).length > 0) {
      const at = readTime(raw.timestamp ?? raw.end_timestamp) ?? readTime(raw.start_timestamp);
      checkTimes(at, at, opts.now.getTime());
      // the page as its page-load is grouped: a path is parameterised as a URL-named transaction is
      const named = text(attrs.transaction ?? attrs['sentry.transaction'] ?? attrs['sentry.segment.name'], 1000);
      const page = named ? (named.startsWith('/') ? parameterizePath(named) : named) : '<unknown page>';
      out.push({ kind: 'vital', trace_id, page, environment: text(attrs['sentry.environment'], 64) ?? 'production', release: text(attrs['sentry.release'], 200), at: at!, vitals });
      continue;
    }
    const segment = spanIdOf(raw.segment_id) ?? (raw.is_segment === true ? span_id : null);
    if (segment) bySegment.set(segment, [...(bySegment.get(segment) ?? []), raw]);
    else out.push({ kind: 'counted' });
  }
  for (const [segment, spans] of bySegment) {
    const root = spans.find((s) => spanIdOf(s.span_id) === segment);
    if (!root) {
      for (let i = 0; i < spans.length; i++) out.push({ kind: 'counted' });
      continue;
    }
    out.push({ kind: 'transaction', transaction: segmentTransaction(root, spans.filter((s) => s !== root), opts) });
  }
  return out;
}

/** A span's attributes as plain values: v1 `data`, v2 typed `attributes` (`{key: {type, value}}`). */
function attributesOf(span: Obj): Obj {
  const out: Obj = { ...obj(span.data) };
  for (const [k, v] of Object.entries(obj(span.attributes))) out[k] = isObj(v) && 'value' in v ? v.value : v;
  return out;
}

function vitalsOfAttributes(attrs: Obj): Partial<Record<Vital, number>> {
  const out: Partial<Record<Vital, number>> = {};
  for (const name of VITAL_NAMES) {
    const v = attrs[`browser.web_vital.${name}.value`];
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) out[name] = v;
  }
  return out;
}

/** A streamed segment (its root span and children) as the transaction an SDK would have sent. */
function segmentTransaction(root: Obj, children: Obj[], opts: { now: Date; traceHeader?: unknown }): TransactionRecord {
  const attrs = attributesOf(root);
  const status = root.status === 'error' ? 'internal_error' : (text(root.status, 40) ?? 'ok');
  const event = {
    // a segment has no event id: its span and trace ids make one, the same on every delivery
    event_id: `${spanIdOf(root.span_id)}${traceIdOf(root.trace_id)!.slice(0, 16)}`,
    transaction: root.name ?? root.description,
    transaction_info: { source: attrs['sentry.source'] },
    start_timestamp: root.start_timestamp,
    timestamp: root.end_timestamp ?? root.timestamp,
    environment: attrs['sentry.environment'],
    release: attrs['sentry.release'],
    contexts: { trace: { trace_id: root.trace_id, span_id: root.span_id, parent_span_id: root.parent_span_id, op: attrs['sentry.op'] ?? root.op, status, data: attrs } },
    measurements: root.measurements,
    spans: children.map((c) => ({ ...c, op: c.op ?? attributesOf(c)['sentry.op'] })),
  };
  return readTransaction(event, opts);
}
