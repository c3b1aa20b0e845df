import { describe, expect, it } from 'vitest';
import { emptyWrites, keys, planMerge, recount, type MergeState } from './release-health.ts';
import type { SessionStatus, SessionUpdate } from './sessions.ts';

const now = new Date('2026-11-21T12:30:00Z');
const started = new Date('2026-11-21T12:05:00Z');
const P = 7;

function freshState(): MergeState {
  return { sessions: new Map(), users: new Map(), hours: new Map(), releases: new Map(), aggregates: new Set() };
}
function update(sid: string, status: SessionStatus, extra: Partial<SessionUpdate> = {}): SessionUpdate {
  return { sid, release: '1.0', environment: 'production', status, errors: 0, did: null, started, ...extra };
}
/** Applies batches in order to one state, as the worker does under the project lock. */
function apply(batches: SessionUpdate[][], aggregates: Parameters<typeof planMerge>[3] = []) {
  const state = freshState();
  batches.forEach((batch, i) => planMerge(P, state, batch, i === 0 ? aggregates : [], now));
  return state;
}
function rollupOf(state: MergeState) {
  const release = state.releases.get(keys.release(P, '1.0', 'production'))!;
  const hour = state.hours.get(keys.hour(P, '1.0', 'production', new Date('2026-11-21T12:00:00Z')))!;
  return { release: { sessions: release.sessions, users: release.users }, hour: { sessions: hour.sessions, users: hour.users } };
}

describe('planMerge', () => {
  it.each([
    { name: 'one ok session', batches: [[update('s1', 'ok')]], sessions: { ok: 1, errored: 0, abnormal: 0, crashed: 0 } },
    { name: 'ok then crashed moves the session', batches: [[update('s1', 'ok')], [update('s1', 'crashed')]], sessions: { ok: 0, errored: 0, abnormal: 0, crashed: 1 } },
    { name: 'crashed then ok (out of order) stays crashed', batches: [[update('s1', 'crashed')], [update('s1', 'ok')]], sessions: { ok: 0, errored: 0, abnormal: 0, crashed: 1 } },
    { name: 'errored and crashed in one session count once, as crashed', batches: [[update('s1', 'errored'), update('s1', 'crashed')]], sessions: { ok: 0, errored: 0, abnormal: 0, crashed: 1 } },
    { name: 'a duplicate batch changes nothing', batches: [[update('s1', 'errored'), update('s2', 'ok')], [update('s1', 'errored'), update('s2', 'ok')]], sessions: { ok: 1, errored: 1, abnormal: 0, crashed: 0 } },
    { name: 'a later release for a stored sid counts in its first release', batches: [[update('s1', 'ok')], [update('s1', 'abnormal', { release: '2.0' })]], sessions: { ok: 0, errored: 0, abnormal: 1, crashed: 0 } },
  ])('$name', ({ batches, sessions }) => {
    const state = apply(batches);
    expect(rollupOf(state).release.sessions).toEqual(sessions);
    expect(rollupOf(state).hour.sessions).toEqual(sessions);
    expect(state.releases.size).toBe(1);
  });

  it('counts a user once, by the worst status of their sessions, per hour and per release', () => {
    const state = apply([[update('s1', 'ok', { did: 'u1' }), update('s2', 'ok', { did: 'u1' }), update('s3', 'ok', { did: 'u2' })], [update('s2', 'crashed', { did: 'u1' })]]);
    const users = { ok: 1, errored: 0, abnormal: 0, crashed: 1 };
    expect(rollupOf(state).release.users).toEqual(users);
    expect(rollupOf(state).hour.users).toEqual(users);
  });

  it('applies an aggregate once, whatever the number of deliveries', () => {
    const agg = { id: 'b1:0:0', update: { release: '1.0', environment: 'production', started, did: 'u9', counts: { ok: 3, errored: 1, abnormal: 0, crashed: 2 } } };
    const state = freshState();
    planMerge(P, state, [], [agg], now);
    const again = planMerge(P, state, [], [agg], now);
    expect(again).toEqual(emptyWrites());
    expect(rollupOf(state).release.sessions).toEqual({ ok: 3, errored: 1, abnormal: 0, crashed: 2 });
    expect(rollupOf(state).release.users).toEqual({ ok: 0, errored: 0, abnormal: 0, crashed: 1 });
  });

  it('writes only what changed', () => {
    const state = apply([[update('s1', 'crashed', { did: 'u1' })]]);
    expect(planMerge(P, state, [update('s1', 'ok', { did: 'u1' })], [], now)).toEqual(emptyWrites());
  });

  it('equals a recount whatever the order of the updates', () => {
    const all = [
      update('a1234567', 'ok', { did: 'u1' }), update('a1234567', 'errored', { did: 'u1' }), update('b1234567', 'crashed', { did: 'u1' }),
      update('c1234567', 'abnormal', { did: 'u2', started: new Date('2026-11-21T11:59:00Z') }), update('c1234567', 'ok', { did: 'u2', started: new Date('2026-11-21T11:59:00Z') }),
      update('d1234567', 'ok', { environment: 'staging' }), update('e1234567', 'ok', { release: '2.0', did: 'u1' }),
    ];
    const orders = [all, [...all].reverse(), [all[4]!, all[2]!, all[0]!, all[6]!, all[1]!, all[5]!, all[3]!]];
    const results = orders.map((order) => {
      const state = freshState();
      order.forEach((u) => planMerge(P, state, [u], [], now));
      const counted = recount(P, state.sessions.values(), []);
      for (const [id, r] of counted.releases) expect({ sessions: state.releases.get(id)!.sessions, users: state.releases.get(id)!.users }).toEqual(r);
      for (const [id, r] of counted.hours) expect({ sessions: state.hours.get(id)!.sessions, users: state.hours.get(id)!.users }).toEqual(r);
      return counted;
    });
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
    expect(results[0]!.releases.size).toBe(3);
    expect(results[0]!.hours.size).toBe(4);
  });
});
