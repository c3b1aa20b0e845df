/**
 * Log lines as Sentry's SDKs send them (issue 69): a `log` item is a container `{items: [...]}` whose header's
 * `item_count` must match its lines; an `otel_log` item is one OpenTelemetry LogRecord. Each line is read into a
 * LogRecord: its time, level and severity, its body, its trace and span, and its attributes as plain values.
 * Pure: the caller gives the time.
 *
 * A container whose count differs from its lines is refused whole (LogItemError `invalid_item_count`); a line that
 * cannot be used (no time, no body) is left out and counted; an attribute of a type Lookout does not know is left
 * out and noted on its line (`dropped_attributes`).
 */
import { isObj, type Obj } from './obj.ts';
import { cutText, wellFormed } from './client-keys.ts';
import { isSecretKey, scrubCards, FILTERED } from './scrub.ts';
import { readTime, spanIdOf, traceIdOf } from './transactions.ts';

export class LogItemError extends Error {
  constructor(
    readonly reason: 'invalid_item_count' | 'invalid',
    message: string,
  ) {
    super(message);
  }
}

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Longest body kept; most attributes kept per line; longest attribute value kept. */
export const LOG_LIMITS = { body: 8192, attributes: 100, value: 1024 } as const;

export interface LogRecord {
  /** ms since the epoch */
  t: number;
  level: LogLevel;
  /** severity number 1–24 */
  sev: number;
  body: string;
  trace_id: string | null;
  /** the span the line was written in (`sentry.trace.parent_span_id`) */
  span_id: string | null;
  attrs: Record<string, string | number | boolean>;
  /** attributes left out: an unknown type, or past the limit */
  dropped_attributes?: number;
}

/** The level of a severity number (1–4 trace … 21–24 fatal). */
export function levelOfSeverity(sev: number): LogLevel {
  return LOG_LEVELS[Math.min(5, Math.max(0, Math.floor((sev - 1) / 4)))]!;
}
/** The lowest severity number of a level (warn = 13), as the SDKs send it. */
export const severityOfLevel = (level: LogLevel) => LOG_LEVELS.indexOf(level) * 4 + 1;

function readLevel(level: unknown, sev: unknown): { level: LogLevel; sev: number } {
  const n = typeof sev === 'number' && Number.isInteger(sev) && sev >= 1 && sev <= 24 ? sev : null;
  const named = typeof level === 'string' ? level.toLowerCase().replace(/^warning$/, 'warn') : '';
  if ((LOG_LEVELS as readonly string[]).includes(named)) return { level: named as LogLevel, sev: n ?? severityOfLevel(named as LogLevel) };
  if (n !== null) return { level: levelOfSeverity(n), sev: n };
  return { level: 'info', sev: 9 };
}

/** A value kept as sent if it is a string, a finite number or a boolean; a secret's value is filtered. */
function keepValue(key: string, value: unknown): string | number | boolean | undefined {
  if (isSecretKey(key)) return FILTERED;
  if (typeof value === 'string') return scrubCards(cutText(wellFormed(value), LOG_LIMITS.value));
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  return undefined;
}

/** Sentry's typed attributes (`{key: {value, type}}`, types string, boolean, integer, double). */
function readAttributes(raw: unknown): { attrs: LogRecord['attrs']; dropped: number } {
  const attrs: LogRecord['attrs'] = {};
  let dropped = 0;
  for (const [key, entry] of Object.entries(isObj(raw) ? raw : {})) {
    if (Object.keys(attrs).length >= LOG_LIMITS.attributes) {
      dropped += 1;
      continue;
    }
    const typed = isObj(entry) ? entry : {};
    let value: unknown = typed.value;
    if (typed.type === 'integer' && typeof value === 'string' && /^-?\d+$/.test(value)) value = Number(value);
    const known = ['string', 'boolean', 'integer', 'double'].includes(typed.type as string) || typed.type === undefined;
    const kept = known ? keepValue(key, value) : undefined;
    if (kept === undefined) dropped += 1;
    else attrs[cutText(wellFormed(key), 200)] = kept;
  }
  return { attrs, dropped };
}

function finish(t: number | null, level: { level: LogLevel; sev: number }, body: unknown, trace: unknown, span: unknown, read: { attrs: LogRecord['attrs']; dropped: number }): LogRecord | null {
  if (t === null || typeof body !== 'string') return null;
  const parent = span ?? read.attrs['sentry.trace.parent_span_id'];
  return {
    t,
    ...level,
    body: scrubCards(cutText(wellFormed(body), LOG_LIMITS.body)),
    trace_id: traceIdOf(trace),
    span_id: spanIdOf(parent),
    attrs: read.attrs,
    ...(read.dropped > 0 && { dropped_attributes: read.dropped }),
  };
}

/**
 * A `log` container's lines: the lines kept and how many were left out. `itemCount` is the item header's
 * `item_count` (required by the protocol; a container without one is read as it is).
 */
export function readLogContainer(payload: unknown, itemCount: unknown): { lines: LogRecord[]; skipped: number } {
  const items = isObj(payload) && Array.isArray(payload.items) ? payload.items : null;
  if (!items) throw new LogItemError('invalid', 'a log item holds {"items": [...]}');
  if (itemCount !== undefined && itemCount !== items.length) {
    throw new LogItemError('invalid_item_count', `the item header's item_count (${JSON.stringify(itemCount)}) differs from the ${items.length} lines sent`);
  }
  const lines: LogRecord[] = [];
  let skipped = 0;
  for (const raw of items) {
    const line = isObj(raw) ? finish(readTime(raw.timestamp), readLevel(raw.level, raw.severity_number), raw.body, raw.trace_id, undefined, readAttributes(raw.attributes)) : null;
    if (line) lines.push(line);
    else skipped += 1;
  }
  return { lines, skipped };
}

/** An OpenTelemetry attribute value (`{stringValue | intValue | boolValue | doubleValue}`) as a plain one. */
function otelValue(v: Obj): unknown {
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('doubleValue' in v) return v.doubleValue;
  if ('intValue' in v) return typeof v.intValue === 'string' && /^-?\d+$/.test(v.intValue) ? Number(v.intValue) : v.intValue;
  return undefined;
}

/** An `otel_log` item (one OpenTelemetry LogRecord in JSON), or null when it has no time or body. */
export function readOtelLog(payload: unknown): LogRecord | null {
  if (!isObj(payload)) throw new LogItemError('invalid', 'an otel_log item is one JSON LogRecord');
  const attrs: Obj = {};
  for (const a of Array.isArray(payload.attributes) ? payload.attributes : []) {
    if (isObj(a) && typeof a.key === 'string' && isObj(a.value)) attrs[a.key] = { value: otelValue(a.value) };
  }
  const nanos = payload.time_unix_nano ?? payload.timeUnixNano ?? payload.observed_time_unix_nano;
  const t = typeof nanos === 'string' && /^\d+$/.test(nanos) ? Number(BigInt(nanos) / 1_000_000n) : typeof nanos === 'number' ? nanos / 1e6 : null;
  const body = isObj(payload.body) ? (payload.body.string_value ?? payload.body.stringValue) : payload.body;
  return finish(t, readLevel(payload.severity_text, payload.severity_number), body, payload.trace_id, payload.span_id, readAttributes(attrs));
}
