/**
 * A cron monitor's check-in as Sentry's SDKs and sentry-cli send it (the envelope's `check_in` item, or the `/cron/`
 * endpoint's query or JSON body), read into one form, and the monitor configuration it may carry (an upsert), with
 * Sentry's defaults and limits (docs/decisions.md, "Monitors"). Pure: the monitor state machine
 * (src/domain/monitor-state.ts) takes what this reads.
 */
import { isObj } from './obj.ts';

export type CheckInStatus = 'in_progress' | 'ok' | 'error' | 'unknown';

export type IntervalUnit = 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year';
export type Schedule = { type: 'crontab'; value: string } | { type: 'interval'; value: number; unit: IntervalUnit };

/** A monitor's configuration; durations in minutes, as Sentry's. */
export interface MonitorConfig {
  /** null: an unscheduled monitor, which records check-ins and failures and is never missed */
  schedule: Schedule | null;
  checkin_margin: number;
  max_runtime: number;
  timezone: string;
  failure_issue_threshold: number;
  recovery_threshold: number;
}

export interface CheckIn {
  /** 32 lowercase hex characters; null (none, or the nil UUID): the latest open check-in of the monitor */
  check_in_id: string | null;
  slug: string;
  status: CheckInStatus;
  /** how long the run took, when the client says (ms) */
  duration_ms: number | null;
  environment: string;
  release: string | null;
  /** the configuration sent with it (checked, unset fields left out), or null */
  config: Partial<MonitorConfig> | null;
  trace_id: string | null;
}

/** Sentry's defaults (sentry/monitors/constants.py). */
export const MONITOR_DEFAULTS: MonitorConfig = {
  schedule: null,
  checkin_margin: 1,
  max_runtime: 30,
  timezone: 'UTC',
  failure_issue_threshold: 1,
  recovery_threshold: 1,
};

/** The longest margin and run time: 28 days in minutes. */
export const MAX_MONITOR_MINUTES = 40_320;
const MAX_THRESHOLD = 720;
const SLUG_LENGTH = 50;
const ENVIRONMENT_LENGTH = 64;
const RELEASE_LENGTH = 200;
/** The environment of a check-in that names none, as Sentry's. */
export const DEFAULT_ENVIRONMENT = 'production';
const INTERVAL_UNITS: readonly IntervalUnit[] = ['minute', 'hour', 'day', 'week', 'month', 'year'];

/** A check-in or configuration that cannot be used: the field (a JSON Pointer) and why. */
export class CheckInError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
  }
}

/**
 * A monitor's slug as Sentry makes it: lowercase, each run of characters other than letters, digits, `_` and `-`
 * a `-`, no `-` at either end, cut to 50 characters. Empty is refused.
 */
export function monitorSlug(raw: unknown, path = '/monitor_slug'): string {
  if (typeof raw !== 'string') throw new CheckInError(path, 'name the monitor (a slug such as nightly-backup)');
  const slug = raw
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9_\s-]/g, '')
    .replace(/[\s-]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '')
    .slice(0, SLUG_LENGTH)
    .replace(/-+$/, '');
  if (slug === '') throw new CheckInError(path, 'the monitor slug is empty once made a slug (letters, digits, - and _)');
  return slug;
}

/**
 * A status as sent. A client's `missed` is recorded as `unknown` (only the server decides a miss, as Relay says); any
 * other word is refused, naming the three.
 */
export function checkInStatus(raw: unknown, path = '/status'): CheckInStatus {
  if (raw === 'in_progress' || raw === 'ok' || raw === 'error') return raw;
  if (raw === 'missed') return 'unknown';
  throw new CheckInError(path, 'must be one of: in_progress, ok, error');
}

/** A check-in id: a UUID with or without dashes, any case; the nil UUID and none mean the latest open one. */
export function checkInId(raw: unknown, path = '/check_in_id'): string | null {
  if (raw === undefined || raw === null || raw === '') return null;
  const id = typeof raw === 'string' ? raw.toLowerCase().replace(/-/g, '') : '';
  if (!/^[0-9a-f]{32}$/.test(id)) throw new CheckInError(path, 'must be a UUID');
  return /^0+$/.test(id) ? null : id;
}

/** Whether a time zone is one the runtime knows (IANA names: Europe/Berlin, UTC). */
export function knownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function minutes(raw: unknown, path: string, min: number, max: number): number {
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < min || raw > max) throw new CheckInError(path, `must be a whole number of minutes from ${min} to ${max}`);
  return raw;
}

function threshold(raw: unknown, path: string): number {
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 1 || raw > MAX_THRESHOLD) throw new CheckInError(path, `must be a whole number from 1 to ${MAX_THRESHOLD}`);
  return raw;
}

/** A schedule: `{type: crontab, value}` (five fields) or `{type: interval, value, unit}`. */
export function readSchedule(raw: unknown, path: string, validCrontab: (expression: string) => boolean): Schedule {
  if (!isObj(raw)) throw new CheckInError(path, 'must be {"type": "crontab", "value": "0 * * * *"} or {"type": "interval", "value": 1, "unit": "day"}');
  if (raw.type === 'crontab') {
    const value = typeof raw.value === 'string' ? raw.value.trim().replace(/\s+/g, ' ') : '';
    if (value.split(' ').length !== 5 || !validCrontab(value)) throw new CheckInError(`${path}/value`, 'must be a crontab expression of five fields, such as "0 * * * *"');
    return { type: 'crontab', value };
  }
  if (raw.type === 'interval') {
    if (typeof raw.value !== 'number' || !Number.isInteger(raw.value) || raw.value < 1) throw new CheckInError(`${path}/value`, 'must be a whole number of units, at least 1');
    if (!INTERVAL_UNITS.includes(raw.unit as IntervalUnit)) throw new CheckInError(`${path}/unit`, `must be one of: ${INTERVAL_UNITS.join(', ')}`);
    return { type: 'interval', value: raw.value, unit: raw.unit as IntervalUnit };
  }
  throw new CheckInError(`${path}/type`, 'must be crontab or interval');
}

/**
 * A `monitor_config` as sent: each field checked, the unset ones left out (the monitor keeps what it has, or takes
 * the defaults). Null and absent fields are unset.
 */
export function readMonitorConfig(raw: unknown, path: string, validCrontab: (expression: string) => boolean): Partial<MonitorConfig> {
  if (!isObj(raw)) throw new CheckInError(path, 'must be an object');
  const out: Partial<MonitorConfig> = {};
  const set = (v: unknown) => v !== undefined && v !== null;
  if (set(raw.schedule)) out.schedule = readSchedule(raw.schedule, `${path}/schedule`, validCrontab);
  if (set(raw.checkin_margin)) out.checkin_margin = minutes(raw.checkin_margin, `${path}/checkin_margin`, 1, MAX_MONITOR_MINUTES);
  if (set(raw.max_runtime)) out.max_runtime = minutes(raw.max_runtime, `${path}/max_runtime`, 1, MAX_MONITOR_MINUTES);
  if (set(raw.timezone)) {
    if (typeof raw.timezone !== 'string' || !knownTimeZone(raw.timezone)) throw new CheckInError(`${path}/timezone`, 'must be a time zone such as Europe/Berlin or UTC');
    out.timezone = raw.timezone;
  }
  if (set(raw.failure_issue_threshold)) out.failure_issue_threshold = threshold(raw.failure_issue_threshold, `${path}/failure_issue_threshold`);
  if (set(raw.recovery_threshold)) out.recovery_threshold = threshold(raw.recovery_threshold, `${path}/recovery_threshold`);
  return out;
}

function optionalText(raw: unknown, path: string, max: number): string | null {
  if (raw === undefined || raw === null || raw === '') return null;
  if (typeof raw !== 'string') throw new CheckInError(path, 'must be a string');
  if (raw.length > max) throw new CheckInError(path, `must be at most ${max} characters`);
  return raw;
}

/** A duration in seconds (a number, or its text from a query) → ms; negative or not a number is refused. */
function durationMs(raw: unknown, path: string): number | null {
  if (raw === undefined || raw === null || raw === '') return null;
  const seconds = typeof raw === 'string' ? Number(raw) : raw;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) throw new CheckInError(path, 'must be a number of seconds, 0 or more');
  return Math.round(seconds * 1000);
}

/**
 * A check-in as the envelope item or the `/cron/` endpoint's JSON body carries it; `slug` from the path wins over the
 * body's. Unknown fields are ignored, null optional ones taken as absent.
 */
export function readCheckIn(raw: unknown, opts: { slug?: string; validCrontab: (expression: string) => boolean }): CheckIn {
  if (!isObj(raw)) throw new CheckInError('', 'a check-in must be a JSON object');
  const contexts = isObj(raw.contexts) ? raw.contexts : {};
  const trace = isObj(contexts.trace) && typeof contexts.trace.trace_id === 'string' ? contexts.trace.trace_id.toLowerCase().replace(/-/g, '') : null;
  return {
    check_in_id: checkInId(raw.check_in_id),
    slug: opts.slug ?? monitorSlug(raw.monitor_slug),
    status: checkInStatus(raw.status),
    duration_ms: durationMs(raw.duration, '/duration'),
    environment: optionalText(raw.environment, '/environment', ENVIRONMENT_LENGTH) ?? DEFAULT_ENVIRONMENT,
    release: optionalText(raw.release, '/release', RELEASE_LENGTH),
    config: raw.monitor_config === undefined || raw.monitor_config === null ? null : readMonitorConfig(raw.monitor_config, '/monitor_config', opts.validCrontab),
    trace_id: trace && /^[0-9a-f]{32}$/.test(trace) ? trace : null,
  };
}

/**
 * A check-in of the `/cron/` endpoint's query: `status` (required), `check_in_id`, `environment`, `duration`.
 */
export function readCheckInQuery(query: Record<string, unknown>, slug: string): CheckIn {
  const one = (name: string) => (Array.isArray(query[name]) ? (query[name] as unknown[])[0] : query[name]);
  return {
    check_in_id: checkInId(one('check_in_id'), 'check_in_id'),
    slug,
    status: checkInStatus(one('status'), 'status'),
    duration_ms: durationMs(one('duration'), 'duration'),
    environment: optionalText(one('environment'), 'environment', ENVIRONMENT_LENGTH) ?? DEFAULT_ENVIRONMENT,
    release: null,
    config: null,
    trace_id: null,
  };
}

/** What a heartbeat's ping URL ends with (healthchecks.io's): nothing, `start`, `fail`, `log` or an exit status. */
export const PING_SIGNALS = ['', 'start', 'fail', 'log'] as const;

/**
 * A heartbeat's ping (`/ping/<public key>/<slug>[/<signal>]`, as healthchecks.io's): nothing or exit status 0 is a
 * run that ended ok, `start` one that began, `fail` or a status 1–255 one that failed, `log` a note that moves
 * nothing (recorded as `unknown`). `rid`, a UUID as healthchecks.io takes it, pairs a start with its end; without
 * it, an end closes the latest open run. `environment` as the `/cron/` query's.
 */
export function readPing(signal: string, query: Record<string, unknown>, slug: string): CheckIn {
  const one = (name: string) => (Array.isArray(query[name]) ? (query[name] as unknown[])[0] : query[name]);
  let status: CheckInStatus;
  if (signal === '' || signal === '0') status = 'ok';
  else if (signal === 'start') status = 'in_progress';
  else if (signal === 'fail' || /^(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-5])$/.test(signal)) status = 'error';
  else if (signal === 'log') status = 'unknown';
  else throw new CheckInError('signal', 'a ping ends with nothing, start, fail, log or an exit status 0–255');
  return {
    check_in_id: checkInId(one('rid'), 'rid'),
    slug,
    status,
    duration_ms: null,
    environment: optionalText(one('environment'), 'environment', ENVIRONMENT_LENGTH) ?? DEFAULT_ENVIRONMENT,
    release: null,
    config: null,
    trace_id: null,
  };
}
