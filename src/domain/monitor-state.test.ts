import { describe, expect, it } from 'vitest';
import { MONITOR_DEFAULTS, type CheckIn, type MonitorConfig } from './checkins.ts';
import { applyCheckIn, applyTick, dueAt, NEW_STATE, type MonitorEffect, type MonitorEnvState, type NextRun } from './monitor-state.ts';

const M = 60_000;
/** every minute: the next minute's start strictly after */
const everyMinute: NextRun = (_config, after) => Math.floor(after / M) * M + M;
const cron = (over: Partial<MonitorConfig> = {}): MonitorConfig => ({ ...MONITOR_DEFAULTS, schedule: { type: 'crontab', value: '* * * * *' }, ...over });
const checkIn = (status: CheckIn['status'], over: Partial<CheckIn> = {}): CheckIn => ({
  check_in_id: null,
  slug: 'job',
  status,
  duration_ms: null,
  environment: 'production',
  release: null,
  config: null,
  trace_id: null,
  ...over,
});
const ID = (n: number) => n.toString(16).padStart(32, '0');
const seenAll = () => true;
/** A place in the order stored: these sort as their numbers do. */
const order = (n: number) => String(n).padStart(8, '0');

/** Applies check-ins (`[at, check-in]`) and ticks (`at` alone) in order; the effects and the last state. */
function run(config: MonitorConfig, steps: ([number, CheckIn] | number)[]) {
  let state: MonitorEnvState = NEW_STATE;
  let made = 0;
  const effects: MonitorEffect[] = [];
  const records = [];
  for (const step of steps) {
    const applied =
      typeof step === 'number'
        ? applyTick(state, config, step, everyMinute, seenAll, () => ID(1000 + made++))
        : applyCheckIn(state, config, step[1], { at: step[0], order: order(made) }, everyMinute, ID(2000 + made++));
    state = applied.state;
    effects.push(...applied.effects);
    records.push(...applied.records);
  }
  return { state, effects, records };
}

describe('applyCheckIn', () => {
  it('a first ok: the monitor is up and expects the next run by the schedule, plus the margin', () => {
    const { state, records } = run(cron({ checkin_margin: 2 }), [[10 * M + 5000, checkIn('ok', { duration_ms: 3000 })]]);
    expect(state).toMatchObject({ status: 'ok', last_checkin: 10 * M + 5000, next_checkin: 11 * M, next_checkin_latest: 13 * M });
    expect(records).toEqual([{ id: ID(2000), status: 'ok', started: 10 * M + 2000, ended: 10 * M + 5000, duration_ms: 3000, expected: null }]);
  });

  it('in_progress then ok pairs by id, the duration derived; a late in_progress of it changes nothing', () => {
    const id = ID(7);
    const { state, records } = run(cron(), [
      [10 * M, checkIn('in_progress', { check_in_id: id })],
      [10 * M + 4000, checkIn('ok', { check_in_id: id })],
      [10 * M + 5000, checkIn('in_progress', { check_in_id: id })],
    ]);
    expect(state.open).toEqual([]);
    expect(records.map((r) => [r.status, r.duration_ms])).toEqual([
      ['in_progress', null],
      ['ok', 4000],
    ]);
  });

  it('no id (or the nil UUID) ends the latest open run', () => {
    const { state, records } = run(cron(), [
      [10 * M, checkIn('in_progress', { check_in_id: ID(1) })],
      [10 * M + 1000, checkIn('in_progress', { check_in_id: ID(2) })],
      [10 * M + 3000, checkIn('error')],
    ]);
    expect(state.open.map((r) => r.id)).toEqual([ID(1)]);
    expect(records.at(-1)).toMatchObject({ id: ID(2), status: 'error', duration_ms: 2000 });
  });

  it('a run that reports in_progress again is held open another max_runtime', () => {
    const id = ID(3);
    const { state } = run(cron({ max_runtime: 5 }), [
      [10 * M + 30_000, checkIn('in_progress', { check_in_id: id })],
      [14 * M, checkIn('in_progress', { check_in_id: id })],
    ]);
    expect(state.open).toEqual([{ id, started: 10 * M + 30_000, timeout_at: 19 * M }]);
  });

  it('failure_issue_threshold failures in a row open one incident; each later failure adds to it', () => {
    const { effects } = run(cron({ failure_issue_threshold: 3 }), [1, 2, 3, 4].map((n) => [n * M, checkIn('error')] as [number, CheckIn]));
    expect(effects).toEqual([
      { kind: 'failed', id: ID(2002), reason: 'error', at: 3 * M, first: true, failures: 3 },
      { kind: 'failed', id: ID(2003), reason: 'error', at: 4 * M, first: false, failures: 4 },
    ]);
  });

  it('an ok between failures starts the count again', () => {
    const { effects, state } = run(cron({ failure_issue_threshold: 2 }), [
      [1 * M, checkIn('error')],
      [2 * M, checkIn('ok')],
      [3 * M, checkIn('error')],
    ]);
    expect(effects).toEqual([]);
    expect(state.status).toBe('ok');
  });

  it('recovery_threshold oks in a row end the incident, once', () => {
    const { effects, state } = run(cron({ recovery_threshold: 2 }), [
      [1 * M, checkIn('error')],
      [2 * M, checkIn('ok')],
      [3 * M, checkIn('ok')],
      [4 * M, checkIn('ok')],
    ]);
    expect(effects.map((e) => e.kind)).toEqual(['failed', 'recovered']);
    expect(effects[1]).toEqual({ kind: 'recovered', id: ID(2002), at: 3 * M, since: 1 * M });
    expect(state).toMatchObject({ status: 'ok', incident: null });
  });

  it('an unknown status is recorded and moves nothing', () => {
    const before = run(cron(), [[M, checkIn('ok')]]).state;
    const applied = applyCheckIn(before, cron(), checkIn('unknown'), { at: 2 * M, order: order(9) }, everyMinute, ID(9));
    expect(applied.state).toBe(before);
    expect(applied.records[0]!.status).toBe('unknown');
  });
});

/** Applies ends (`[order, status]`, received a second apart in that order) in the order listed; the last state and effects. */
function applyInTurn(config: MonitorConfig, ends: [number, 'ok' | 'error'][]) {
  let state: MonitorEnvState = NEW_STATE;
  const effects: MonitorEffect[] = [];
  for (const [n, status] of ends) {
    const applied = applyCheckIn(state, config, checkIn(status), { at: 10 * M + n * 1000, order: order(n) }, everyMinute, ID(3000 + n));
    state = applied.state;
    effects.push(...applied.effects);
  }
  return { state, effects };
}

describe('applyCheckIn, a check-in applied after one stored later (its job overtaken)', () => {
  it('an error then an ok, the ok applied first: the error ends its run and raises nothing', () => {
    const { state, effects } = applyInTurn(cron(), [
      [2, 'ok'],
      [1, 'error'],
    ]);
    expect(effects).toEqual([]);
    expect(state).toMatchObject({ status: 'ok', incident: null, failures_in_row: 0, ended: [ID(3002), ID(3001)] });
  });

  it('an ok then an error, the error applied first: the incident stays open', () => {
    const { state, effects } = applyInTurn(cron(), [
      [2, 'error'],
      [1, 'ok'],
    ]);
    expect(effects.map((e) => e.kind)).toEqual(['failed']);
    expect(state).toMatchObject({ status: 'error', incident: { failures: 1 } });
  });

  it('a late sign of life does not move the schedule back', () => {
    const { state } = applyInTurn(cron(), [
      [130, 'ok'],
      [10, 'ok'],
    ]);
    expect(state).toMatchObject({ last_checkin: 10 * M + 130_000, next_checkin: 13 * M });
  });

  it('with thresholds over one, a late end is counted as it comes', () => {
    const { state } = applyInTurn(cron({ failure_issue_threshold: 2 }), [
      [1, 'error'],
      [3, 'ok'],
      [2, 'error'],
    ]);
    expect(state).toMatchObject({ status: 'ok', failures_in_row: 1 });
  });

  it('a state saved before the places were kept takes nothing as late', () => {
    const { last_ok: _ok, last_error: _error, ...older } = applyInTurn(cron(), [[5, 'ok']]).state;
    const applied = applyCheckIn(older, cron(), checkIn('error'), { at: 10 * M, order: order(1) }, everyMinute, ID(1));
    expect(applied.state).toMatchObject({ status: 'error' });
  });
});

describe('applyTick', () => {
  it('nothing is expected before the first check-in, nor of an unscheduled monitor', () => {
    expect(run(cron(), [10 * M, 11 * M]).effects).toEqual([]);
    expect(run(cron({ schedule: null }), [[M, checkIn('ok')], 10 * M, 100 * M]).effects).toEqual([]);
  });

  it('a run not begun by its time plus the margin is missed at the tick after, once', () => {
    const { effects, records, state } = run(cron({ checkin_margin: 2 }), [[10 * M + 1000, checkIn('ok')], 12 * M, 13 * M, 13 * M]);
    expect(effects).toEqual([{ kind: 'failed', id: ID(1001), reason: 'missed', at: 13 * M, first: true, failures: 1 }]);
    expect(records.at(-1)).toMatchObject({ status: 'missed', expected: 11 * M });
    expect(state).toMatchObject({ next_checkin: 13 * M, next_checkin_latest: 15 * M });
  });

  it('a miss Lookout could not have heard (it was down, or behind) is unknown and fails nothing', () => {
    let state = run(cron(), [[10 * M + 1000, checkIn('ok')]]).state;
    const applied = applyTick(state, cron(), 12 * M, everyMinute, () => false, () => ID(5));
    state = applied.state;
    expect(applied.effects).toEqual([]);
    expect(applied.records[0]).toMatchObject({ status: 'unknown', expected: 11 * M });
    expect(state.next_checkin).toBe(12 * M);
  });

  it('after a long silence the schedule goes on from the last expected run before the tick', () => {
    const { state, effects } = run(cron(), [[10 * M + 1000, checkIn('ok')], 500 * M]);
    expect(effects).toHaveLength(1);
    expect(state.next_checkin).toBe(500 * M);
  });

  it('a run open past max_runtime times out; one outlived by a newer run that ended fails nothing', () => {
    const timedOut = run(cron({ max_runtime: 3, schedule: null }), [[10 * M + 20_000, checkIn('in_progress', { check_in_id: ID(1) })], 12 * M, 13 * M]);
    expect(timedOut.effects).toEqual([{ kind: 'failed', id: ID(1), reason: 'timeout', at: 13 * M, first: true, failures: 1 }]);
    expect(timedOut.state.open).toEqual([]);
    const outlived = run(cron({ max_runtime: 3, schedule: null }), [
      [10 * M, checkIn('in_progress', { check_in_id: ID(1) })],
      [11 * M, checkIn('in_progress', { check_in_id: ID(2) })],
      [11 * M + 5000, checkIn('ok', { check_in_id: ID(2) })],
      13 * M,
    ]);
    expect(outlived.effects).toEqual([]);
    expect(outlived.records.at(-1)).toMatchObject({ id: ID(1), status: 'timeout' });
  });

  it('dueAt is the nearest of the miss deadline and the open runs’ timeouts', () => {
    const { state } = run(cron({ checkin_margin: 5, max_runtime: 2 }), [[10 * M, checkIn('in_progress', { check_in_id: ID(1) })]]);
    expect(dueAt(state)).toBe(12 * M);
    expect(dueAt(NEW_STATE)).toBeNull();
  });
});

describe('properties (2,000 random sequences)', () => {
  it('an incident is open exactly while the status is error; recoveries follow failures; replays change nothing', () => {
    let seed = 42;
    const rand = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % n);
    for (let i = 0; i < 2000; i++) {
      const config = cron({ failure_issue_threshold: 1 + rand(3), recovery_threshold: 1 + rand(3), checkin_margin: 1 + rand(3), max_runtime: 1 + rand(5) });
      let state: MonitorEnvState = NEW_STATE;
      let open = false;
      let at = 10 * M;
      for (let step = 0; step < 30; step++) {
        at += rand(3) * 20_000;
        const roll = rand(5);
        const id = rand(2) ? ID(rand(6) + 1) : null;
        const applied =
          roll === 0
            ? applyTick(state, config, Math.floor(at / M) * M, everyMinute, seenAll, () => ID(500 + step))
            : applyCheckIn(state, config, checkIn((['in_progress', 'ok', 'error', 'ok'] as const)[roll - 1]!, { check_in_id: id }), { at, order: order(step) }, everyMinute, ID(900 + step));
        for (const e of applied.effects) {
          if (e.kind === 'recovered') expect(open).toBe(true);
          if (e.kind === 'failed' && e.first) expect(open).toBe(false);
          open = e.kind === 'failed';
        }
        state = applied.state;
        expect(state.incident !== null).toBe(state.status === 'error');
        expect(state.incident !== null).toBe(open);
        if (roll > 1 && id !== null) {
          // the same end again is a replay
          const again = applyCheckIn(state, config, checkIn('ok', { check_in_id: id }), { at, order: order(step) }, everyMinute, 'x');
          expect(again.state).toBe(state);
        }
      }
    }
  });

  it('with thresholds of one, ends applied with any one overtaken by a later one leave the status of ends applied in order', () => {
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % n);
    for (let i = 0; i < 2000; i++) {
      const ends = Array.from({ length: 2 + rand(12) }, (_, n): [number, 'ok' | 'error'] => [n, rand(2) ? 'ok' : 'error']);
      const swapped = [...ends];
      for (let k = 0; k < 1 + rand(3); k++) {
        const at = rand(swapped.length - 1);
        [swapped[at], swapped[at + 1]] = [swapped[at + 1]!, swapped[at]!];
      }
      const inOrder = applyInTurn(cron(), ends).state;
      const overtaken = applyInTurn(cron(), swapped).state;
      expect(overtaken.status).toBe(inOrder.status);
      expect(overtaken.incident !== null).toBe(inOrder.incident !== null);
      expect(overtaken.last_checkin).toBe(inOrder.last_checkin);
    }
  });
});
