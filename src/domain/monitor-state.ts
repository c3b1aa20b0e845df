/**
 * A cron monitor's state in one environment, and the two things that move it: a check-in (`applyCheckIn`) and the
 * clock's minute (`applyTick`), as Sentry's monitors consumer and clock tasks decide (docs/decisions.md, "Monitors").
 * Pure: the worker reads the state, applies, and writes it back only if no one else wrote meanwhile
 * (src/state/monitors.state.ts), so one monitor's check-ins and ticks are applied one at a time, each once.
 * Jobs run side by side, so a check-in can be applied after one stored later (its job overtaken, or retried): each
 * comes with its place in the order stored. A late sign of life does not move the schedule back; and where one
 * failure opens an incident and one `ok` ends it (the thresholds' defaults, so the status is the newest end's), a
 * late `ok` or `error` that a later end of the other kind already answered ends its run, is recorded, and moves
 * nothing else, as if it had been applied in its place. With other thresholds the counts in a row depend on the
 * order applied, and a late end is counted as it comes (docs/decisions.md, "Monitors").
 *
 * - Any check-in (`in_progress` too) is a sign of life: the next expected run is the schedule's next time after it,
 *   and a run is missed only if no check-in came by that time plus the margin. A long run is caught by its timeout.
 * - `error`, a miss and a timeout are failures; `failure_issue_threshold` failures in a row open an incident (one
 *   issue), and each further failure while it is open is an occurrence. `recovery_threshold` `ok`s in a row end it.
 * - Nothing is expected of a monitor before its first check-in, nor of one without a schedule.
 */
import type { CheckIn, MonitorConfig } from './checkins.ts';

export type RunOutcome = 'ok' | 'error' | 'missed' | 'timeout' | 'unknown';
export type FailureReason = 'error' | 'missed' | 'timeout';

/** A run that reported `in_progress` and has not ended. */
export interface OpenRun {
  id: string;
  started: number;
  /** when it times out unless it ends or reports again (ms) */
  timeout_at: number;
}

export interface MonitorEnvState {
  /** new: never checked in; ok; error: an incident is open */
  status: 'new' | 'ok' | 'error';
  last_checkin: number | null;
  /** the next run expected (ms), and that plus the margin: missed when the clock passes it */
  next_checkin: number | null;
  next_checkin_latest: number | null;
  open: OpenRun[];
  /** the ids of runs that ended lately, newest last: a late `in_progress` of one is ignored */
  ended: string[];
  /** when the newest run that ended with ok or error started (a timeout of an older one fails nothing) */
  last_ended_started: number | null;
  failures_in_row: number;
  oks_in_row: number;
  /**
   * where the newest `ok` and `error` applied were stored (`CheckInPlace.order`): a late one of the other kind is
   * answered by them (absent in states saved before they were kept: nothing is taken as late)
   */
  last_ok?: string | null;
  last_error?: string | null;
  /** the open incident: when it began and how many failures it holds */
  incident: { since: number; failures: number } | null;
}

/** A check-in as the history keeps it: those sent, and those the clock makes (missed, timeout). */
export interface CheckInRecord {
  id: string;
  status: RunOutcome | 'in_progress';
  /** when the run began (received, less its duration when sent) and ended, in ms */
  started: number;
  ended: number | null;
  duration_ms: number | null;
  /** the run the schedule expected, for a miss */
  expected: number | null;
}

/**
 * What a change means beyond the state: an incident opened or grew (`failed`), or ended (`recovered`). `id` names
 * the check-in record that made it (a run's, a miss's), so the issue counts each once however often it is delivered.
 */
export type MonitorEffect =
  | { kind: 'failed'; id: string; reason: FailureReason; at: number; first: boolean; failures: number }
  | { kind: 'recovered'; id: string; at: number; since: number };

export interface Applied {
  state: MonitorEnvState;
  /** the check-in records made or changed, by id */
  records: CheckInRecord[];
  effects: MonitorEffect[];
}

/** The schedule's next expected run strictly after `after` (ms), in the monitor's time zone; null without one. */
export type NextRun = (config: MonitorConfig, after: number) => number | null;

/** Runs open at once that a monitor remembers; the oldest is let go past it. */
const MAX_OPEN = 50;
const MAX_ENDED = 50;
/** A run reporting `in_progress` again is held open at most this long after it started (28 days), as Sentry's. */
const MAX_HELD_MS = 40_320 * 60_000;
const MINUTE = 60_000;

export const NEW_STATE: MonitorEnvState = {
  status: 'new',
  last_checkin: null,
  next_checkin: null,
  next_checkin_latest: null,
  open: [],
  ended: [],
  last_ended_started: null,
  failures_in_row: 0,
  oks_in_row: 0,
  last_ok: null,
  last_error: null,
  incident: null,
};

/** When a check-in was received (ms), and where it was stored: `order`s sort in the order check-ins were stored. */
export interface CheckInPlace {
  at: number;
  order: string;
}

const floorMinute = (ms: number) => ms - (ms % MINUTE);

/** Where the next run is expected after a sign of life at `at` (one older than the last moves nothing). */
function expectNext(state: MonitorEnvState, config: MonitorConfig, at: number, next: NextRun): MonitorEnvState {
  if (state.last_checkin !== null && at < state.last_checkin) return state;
  const expected = config.schedule ? next(config, at) : null;
  return {
    ...state,
    last_checkin: at,
    next_checkin: expected,
    next_checkin_latest: expected === null ? null : expected + config.checkin_margin * MINUTE,
  };
}

function failed(state: MonitorEnvState, config: MonitorConfig, reason: FailureReason, at: number, id: string): { state: MonitorEnvState; effects: MonitorEffect[] } {
  const failures = state.failures_in_row + 1;
  const s = { ...state, failures_in_row: failures, oks_in_row: 0 };
  if (s.incident) {
    const incident = { ...s.incident, failures: s.incident.failures + 1 };
    return { state: { ...s, incident }, effects: [{ kind: 'failed', id, reason, at, first: false, failures: incident.failures }] };
  }
  if (failures < config.failure_issue_threshold) return { state: s, effects: [] };
  return { state: { ...s, status: 'error', incident: { since: at, failures } }, effects: [{ kind: 'failed', id, reason, at, first: true, failures }] };
}

function succeeded(state: MonitorEnvState, config: MonitorConfig, at: number, id: string): { state: MonitorEnvState; effects: MonitorEffect[] } {
  const oks = state.oks_in_row + 1;
  const s: MonitorEnvState = { ...state, oks_in_row: oks, failures_in_row: 0 };
  if (!s.incident) return { state: { ...s, status: 'ok' }, effects: [] };
  if (oks < config.recovery_threshold) return { state: s, effects: [] };
  return { state: { ...s, status: 'ok', incident: null }, effects: [{ kind: 'recovered', id, at, since: s.incident.since }] };
}

const newest = (mark: string | null | undefined, order: string) => (mark != null && mark > order ? mark : order);

function remember(ended: string[], id: string): string[] {
  return [...ended.filter((e) => e !== id), id].slice(-MAX_ENDED);
}

/**
 * One check-in, received and stored at `place`. `newId` names a run that came without an id. A late `in_progress`
 * of a run that ended, and an end of one that already ended, change nothing; with thresholds of one, a late `ok`
 * after a later `error` was applied, or a late `error` after a later `ok`, ends its run and moves nothing else.
 */
export function applyCheckIn(state: MonitorEnvState, config: MonitorConfig, checkIn: CheckIn, place: CheckInPlace, next: NextRun, newId: string): Applied {
  const { at, order } = place;
  const none: Applied = { state, records: [], effects: [] };
  const open = checkIn.check_in_id === null ? state.open.at(-1) : state.open.find((r) => r.id === checkIn.check_in_id);
  const id = checkIn.check_in_id ?? open?.id ?? newId;
  if (checkIn.status === 'unknown') {
    return { state, records: [{ id, status: 'unknown', started: at, ended: at, duration_ms: checkIn.duration_ms, expected: null }], effects: [] };
  }
  if (!open && state.ended.includes(id)) return none;
  const alive = expectNext(state, config, at, next);

  if (checkIn.status === 'in_progress') {
    const started = open?.started ?? at - (checkIn.duration_ms ?? 0);
    // reporting again holds the run open for another max_runtime, never past 28 days from its start
    const timeout_at = open ? Math.min(at + config.max_runtime * MINUTE, started + MAX_HELD_MS) : floorMinute(started) + config.max_runtime * MINUTE;
    const run = { id, started, timeout_at };
    const runs = [...alive.open.filter((r) => r.id !== id), run].slice(-MAX_OPEN);
    return {
      state: { ...alive, status: alive.status === 'new' ? 'ok' : alive.status, open: runs },
      records: [{ id, status: 'in_progress', started, ended: null, duration_ms: null, expected: null }],
      effects: [],
    };
  }

  // ok or error: the run ends (one that never said in_progress begins its duration before)
  const started = open?.started ?? at - (checkIn.duration_ms ?? 0);
  const duration = checkIn.duration_ms ?? at - started;
  const ended: MonitorEnvState = {
    ...alive,
    open: alive.open.filter((r) => r.id !== id),
    ended: remember(alive.ended, id),
    last_ended_started: Math.max(alive.last_ended_started ?? started, started),
  };
  const marked: MonitorEnvState = checkIn.status === 'ok' ? { ...ended, last_ok: newest(ended.last_ok, order) } : { ...ended, last_error: newest(ended.last_error, order) };
  // with thresholds of one the status is the newest end's: a later end of the other kind already answered this one
  const byNewest = config.failure_issue_threshold === 1 && config.recovery_threshold === 1;
  const answeredBy = checkIn.status === 'ok' ? ended.last_error : ended.last_ok;
  const answered = byNewest && answeredBy != null && answeredBy > order;
  const moved = answered ? { state: marked, effects: [] } : checkIn.status === 'ok' ? succeeded(marked, config, at, id) : failed(marked, config, 'error', at, id);
  return { state: moved.state, records: [{ id, status: checkIn.status, started, ended: at, duration_ms: duration, expected: null }], effects: moved.effects };
}

/**
 * The clock's minute `tick` (ms, a minute's start): runs open past their maximum time out, and a run the schedule
 * expected with no check-in by its margin is missed, the schedule then going on from the last expected time before
 * the tick. `seen(from, to)` says whether Lookout could hear check-ins over that span; a miss it could not have
 * heard is recorded as `unknown` and fails nothing. `newId` names the records the clock makes.
 */
export function applyTick(state: MonitorEnvState, config: MonitorConfig, tick: number, next: NextRun, seen: (from: number, to: number) => boolean, newId: () => string): Applied {
  let s = state;
  const records: CheckInRecord[] = [];
  const effects: MonitorEffect[] = [];

  for (const run of s.open.filter((r) => r.timeout_at <= tick)) {
    s = { ...s, open: s.open.filter((r) => r.id !== run.id), ended: remember(s.ended, run.id) };
    records.push({ id: run.id, status: 'timeout', started: run.started, ended: run.timeout_at, duration_ms: null, expected: null });
    // a run that a newer one outlived fails nothing
    if (s.last_ended_started !== null && s.last_ended_started > run.started) continue;
    const f = failed(s, config, 'timeout', run.timeout_at, run.id);
    s = f.state;
    effects.push(...f.effects);
  }

  if (config.schedule && s.next_checkin !== null && s.next_checkin_latest !== null && s.next_checkin_latest <= tick) {
    const expected = s.next_checkin;
    const heard = seen(expected, s.next_checkin_latest);
    const id = newId();
    records.push({ id, status: heard ? 'missed' : 'unknown', started: expected, ended: null, duration_ms: null, expected });
    if (heard) {
      const f = failed(s, config, 'missed', s.next_checkin_latest, id);
      s = f.state;
      effects.push(...f.effects);
    }
    // the schedule goes on from the last run it expected before the tick (ticks skipped are not misses twice)
    let last = expected;
    for (let at = next(config, expected); at !== null && at < tick; at = next(config, at)) last = at;
    const upcoming = next(config, last);
    s = { ...s, next_checkin: upcoming, next_checkin_latest: upcoming === null ? null : upcoming + config.checkin_margin * MINUTE };
  }
  return { state: s, records, effects };
}

/**
 * A monitor paused or resumed by a person: nothing is expected of it (no run, no open run to time out) until its
 * next check-in, so a paused span is never a miss.
 */
export function expectNothing(state: MonitorEnvState): Applied {
  return { state: { ...state, next_checkin: null, next_checkin_latest: null, open: [] }, records: [], effects: [] };
}

/** The time the clock must look at this state again: its next deadline (ms), or null when nothing is due. */
export function dueAt(state: MonitorEnvState): number | null {
  const times = [state.next_checkin_latest, ...state.open.map((r) => r.timeout_at)].filter((t): t is number => t !== null);
  return times.length ? Math.min(...times) : null;
}
