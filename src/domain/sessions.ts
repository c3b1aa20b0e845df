/**
 * Release health, as pure functions: reading the three body forms of spec
 * 4.4 (and Sentry's session shapes) into entries, the worst-status merge of
 * spec 3.2, and the rollup arithmetic. No I/O here.
 */

export const STATUSES = ['ok', 'errored', 'abnormal', 'crashed'] as const;
export type SessionStatus = (typeof STATUSES)[number];
export type StatusCounts = Record<SessionStatus, number>;

/** Severity order (docs/decisions.md): ok < errored < abnormal < crashed. */
const RANK: Record<SessionStatus, number> = { ok: 0, errored: 1, abnormal: 2, crashed: 3 };

export function worse(a: SessionStatus, b: SessionStatus): SessionStatus {
  return RANK[a] >= RANK[b] ? a : b;
}

export function zeroCounts(): StatusCounts {
  return { ok: 0, errored: 0, abnormal: 0, crashed: 0 };
}

export function total(counts: StatusCounts): number {
  return counts.ok + counts.errored + counts.abnormal + counts.crashed;
}

/** The worst status among buckets with a non-zero count, or null when all are zero. */
export function worstOf(counts: StatusCounts): SessionStatus | null {
  for (const status of [...STATUSES].reverse()) if (counts[status] > 0) return status;
  return null;
}

/** One session update as stored in a raw entry, after the field rules. */
export interface SessionUpdate {
  sid: string;
  release: string;
  environment: string;
  status: SessionStatus;
  errors: number;
  /** keyed hash prefix of the user id, or null */
  did: string | null;
  started: Date;
}

/** Sessions reported already counted, per status (form 3 and Sentry's `sessions` item). */
export interface AggregateUpdate {
  release: string;
  environment: string;
  started: Date;
  did: string | null;
  counts: StatusCounts;
}

/** The merged state of one session: the worst status and the highest error count seen. */
export interface SessionState {
  status: SessionStatus;
  errors: number;
}

/** Spec 3.2: re-sending an sid keeps the worst status (and the highest error count). */
export function mergeSession(current: SessionState | null, update: SessionState): SessionState {
  if (!current) return { ...update };
  return { status: worse(current.status, update.status), errors: Math.max(current.errors, update.errors) };
}

/**
 * A reported status on Lookout's scale. `exited` (Sentry's clean end) is ok;
 * Relay's `unhandled` is errored; any error count above 0 makes an ok
 * session errored (spec 2.5).
 */
export function normalizeStatus(status: string, errors: number): SessionStatus | null {
  const mapped = status === 'exited' ? 'ok' : status === 'unhandled' ? 'errored' : status;
  if (!(STATUSES as readonly string[]).includes(mapped)) return null;
  return errors > 0 ? worse(mapped as SessionStatus, 'errored') : (mapped as SessionStatus);
}

export const DEFAULT_ENVIRONMENT = 'production';
const NIL_UUID = /^0{8}-?0{4}-?0{4}-?0{4}-?0{12}$/;
/**
 * The update window (docs/decisions.md): a session's state is kept for this
 * long after `started`, and entries started earlier are skipped. Relay's
 * default; SESSION_UPDATE_WINDOW_HOURS changes it.
 */
export const UPDATE_WINDOW_MS = 5 * 24 * 3600 * 1000;
export const STARTED_MAX_FUTURE_MS = 3600 * 1000;

/** Whether an entry started at `started` may still change state received at `now`. */
export function inWindow(started: Date, now: Date, windowMs: number): boolean {
  return started.getTime() >= now.getTime() - windowMs;
}

/** `started` as an ISO string or epoch seconds (missing: now); null when unreadable, past the window or ahead. */
export function parseStarted(value: unknown, now: Date, windowMs = UPDATE_WINDOW_MS): Date | null {
  if (value === undefined || value === null) return now;
  let at: Date;
  if (typeof value === 'number' && Number.isFinite(value)) at = new Date(value * 1000);
  else if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value)) at = new Date(value);
  else return null;
  const t = at.getTime();
  if (Number.isNaN(t) || !inWindow(at, now, windowMs) || t > now.getTime() + STARTED_MAX_FUTURE_MS) return null;
  return at;
}

/** Why an entry is skipped: `reason` is a stable code, `path` is within the entry. */
export interface EntryError {
  path: string;
  reason: 'invalid_entry' | 'missing_release' | 'unknown_status' | 'started_out_of_range' | 'no_sessions';
  message: string;
}

/**
 * The fields an entry may carry, Lookout's and Sentry's. The JSON Schemas
 * (schemas/session.json, schemas/session-aggregate.json) have checked types
 * and lengths before these readers run.
 */
export interface SessionEntry {
  sid: string;
  status: string;
  release?: string;
  environment?: string;
  errors?: number;
  did?: string;
  started?: string | number;
  attrs?: { release?: string; environment?: string };
}
export interface AggregateEntry {
  started?: string | number;
  did?: string;
  release?: string;
  environment?: string;
  exited?: number;
  ok?: number;
  errored?: number;
  abnormal?: number;
  crashed?: number;
}
export interface EntryDefaults {
  release?: string;
  environment?: string;
}

export type HashDid = (did: string) => string;

/** A user id → its keyed hash prefix; the nil UUID (Sentry's "no user") and a missing id → null. */
function didOf(did: string | undefined, hashDid: HashDid): string | null {
  return did === undefined || NIL_UUID.test(did) ? null : hashDid(did);
}

const startedRule = (windowMs: number) =>
  `must be an ISO time or epoch seconds, at most 1 hour ahead, and not older than the update window (${windowMs / 3_600_000} hours): a session started earlier can no longer change`;
const RELEASE_RULE = 'is required (on the entry, in attrs or on the body)';

/** One session entry (Lookout's or Sentry's shape) → an update, or why it is skipped. */
export function readSession(entry: SessionEntry, now: Date, hashDid: HashDid, defaults: EntryDefaults = {}, windowMs = UPDATE_WINDOW_MS): SessionUpdate | EntryError[] {
  const release = entry.release ?? entry.attrs?.release ?? defaults.release;
  const errors = entry.errors ?? 0;
  const status = normalizeStatus(entry.status, errors);
  const started = parseStarted(entry.started, now, windowMs);
  const problems: EntryError[] = [];
  if (!release) problems.push({ path: '/release', reason: 'missing_release', message: RELEASE_RULE });
  if (!status) problems.push({ path: '/status', reason: 'unknown_status', message: `must be one of ${STATUSES.join(', ')} or exited` });
  if (!started) problems.push({ path: '/started', reason: 'started_out_of_range', message: startedRule(windowMs) });
  if (problems.length) return problems;
  return {
    sid: entry.sid,
    release: release!,
    environment: entry.environment ?? entry.attrs?.environment ?? defaults.environment ?? DEFAULT_ENVIRONMENT,
    status: status!,
    errors,
    did: didOf(entry.did, hashDid),
    started: started!,
  };
}

/** One aggregate item `{started, exited|ok, errored, abnormal, crashed, did?}` → counts, or why it is skipped. */
export function readAggregate(item: AggregateEntry, now: Date, hashDid: HashDid, defaults: EntryDefaults, windowMs = UPDATE_WINDOW_MS): AggregateUpdate | EntryError[] {
  const release = item.release ?? defaults.release;
  const counts: StatusCounts = {
    ok: (item.exited ?? 0) + (item.ok ?? 0),
    errored: item.errored ?? 0,
    abnormal: item.abnormal ?? 0,
    crashed: item.crashed ?? 0,
  };
  const started = parseStarted(item.started, now, windowMs);
  const problems: EntryError[] = [];
  if (!release) problems.push({ path: '/release', reason: 'missing_release', message: RELEASE_RULE });
  if (total(counts) === 0) problems.push({ path: '', reason: 'no_sessions', message: 'counts no session' });
  if (!started) problems.push({ path: '/started', reason: 'started_out_of_range', message: startedRule(windowMs) });
  if (problems.length) return problems;
  return {
    release: release!,
    environment: item.environment ?? defaults.environment ?? DEFAULT_ENVIRONMENT,
    started: started!,
    did: didOf(item.did, hashDid),
    counts,
  };
}

/** The hour a session counts in: `started` truncated to the hour (UTC). */
export function hourOf(at: Date): Date {
  return new Date(Math.floor(at.getTime() / 3_600_000) * 3_600_000);
}

/** 1 − part/whole, or null when there is nothing to divide (spec: rates from 0 to 1). */
export function freeRate(part: number, whole: number): number | null {
  return whole > 0 ? (whole - part) / whole : null;
}

export function share(part: number, whole: number): number | null {
  return whole > 0 ? part / whole : null;
}

export function addCounts(into: StatusCounts, from: StatusCounts, sign = 1): StatusCounts {
  for (const s of STATUSES) into[s] += sign * from[s];
  return into;
}
