import { describe, expect, it } from 'vitest';
import { freeRate, hourOf, mergeSession, normalizeStatus, parseStarted, readAggregate, readSession, share, worse } from './sessions.ts';

const now = new Date('2026-11-21T12:34:56Z');
const hash = (did: string) => `h(${did})`;

describe('worse: ok < errored < abnormal < crashed', () => {
  it.each([
    ['ok', 'ok', 'ok'],
    ['ok', 'errored', 'errored'],
    ['errored', 'ok', 'errored'],
    ['errored', 'abnormal', 'abnormal'],
    ['crashed', 'abnormal', 'crashed'],
    ['abnormal', 'crashed', 'crashed'],
    ['crashed', 'ok', 'crashed'],
  ] as const)('%s, %s → %s', (a, b, out) => expect(worse(a, b)).toBe(out));
});

describe('normalizeStatus', () => {
  it.each([
    ['ok', 0, 'ok'],
    ['exited', 0, 'ok'],
    ['ok', 1, 'errored'],
    ['exited', 3, 'errored'],
    ['unhandled', 0, 'errored'],
    ['abnormal', 2, 'abnormal'],
    ['crashed', 5, 'crashed'],
    ['errored', 0, 'errored'],
    ['healthy', 0, null],
  ] as const)('%s with %i errors → %s', (status, errors, out) => expect(normalizeStatus(status, errors)).toBe(out));
});

describe('mergeSession keeps the worst status and the highest error count', () => {
  it.each([
    [null, { status: 'ok', errors: 0 }, { status: 'ok', errors: 0 }],
    [{ status: 'ok', errors: 0 }, { status: 'crashed', errors: 1 }, { status: 'crashed', errors: 1 }],
    [{ status: 'crashed', errors: 1 }, { status: 'ok', errors: 0 }, { status: 'crashed', errors: 1 }],
    [{ status: 'errored', errors: 4 }, { status: 'abnormal', errors: 2 }, { status: 'abnormal', errors: 4 }],
  ] as const)('%j + %j → %j', (current, update, out) => expect(mergeSession(current, update)).toEqual(out));
});

describe('parseStarted', () => {
  it.each([
    [undefined, now.toISOString()],
    ['2026-11-21T10:00:00Z', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T10:00:00.5+01:00', '2026-11-21T09:00:00.500Z'],
    [1_795_000_000, new Date(1_795_000_000_000).toISOString()],
    ['yesterday', null],
    ['2026-13-40T00:00:00Z', null],
    ['2026-11-16T12:34:55Z', null], // older than the 5-day update window
    ['2026-11-16T12:34:56Z', '2026-11-16T12:34:56.000Z'], // just inside it
    ['2026-11-21T14:00:00Z', null], // more than an hour ahead
  ])('%s → %s', (value, out) => expect(parseStarted(value, now)?.toISOString() ?? null).toBe(out));
});

describe('readSession', () => {
  it('reads Lookout and Sentry shapes alike', () => {
    expect(readSession({ sid: 'abcdefgh', status: 'ok', release: '1.0', did: 'u1', errors: 2 }, now, hash)).toEqual({
      sid: 'abcdefgh', release: '1.0', environment: 'production', status: 'errored', errors: 2, did: 'h(u1)', started: now,
    });
    const sentry = readSession({ sid: 'abcdefgh', status: 'exited', attrs: { release: 'app@2', environment: 'staging' }, started: '2026-11-21T12:00:00Z', did: '00000000-0000-0000-0000-000000000000' }, now, hash);
    expect(sentry).toMatchObject({ release: 'app@2', environment: 'staging', status: 'ok', did: null });
  });
  it.each([
    [{ sid: 'abcdefgh', status: 'ok' }, '/release'],
    [{ sid: 'abcdefgh', status: 'ok', release: '1', started: 'soon' }, '/started'],
  ])('skips %j (%s)', (entry, path) => {
    const out = readSession(entry, now, hash);
    expect(Array.isArray(out) && out.map((e) => e.path)).toEqual([path]);
  });
});

describe('readAggregate', () => {
  it('adds exited and ok, keeps the other buckets and takes release from the body', () => {
    expect(readAggregate({ started: '2026-11-21T12:00:00Z', exited: 3, ok: 1, errored: 2, crashed: 1, did: 'u' }, now, hash, { release: 'r' })).toEqual({
      release: 'r', environment: 'production', started: new Date('2026-11-21T12:00:00Z'), did: 'h(u)', counts: { ok: 4, errored: 2, abnormal: 0, crashed: 1 },
    });
  });
  it.each([
    [{ started: '2026-11-21T12:00:00Z', exited: 0 }, { release: 'r' }, ''],
    [{ exited: 1 }, {}, '/release'],
  ])('skips %j', (item, defaults, path) => {
    const out = readAggregate(item, now, hash, defaults);
    expect(Array.isArray(out) && out.map((e) => e.path)).toEqual([path]);
  });
});

describe('rates', () => {
  it.each([
    [0, 10, 1],
    [1, 4, 0.75],
    [4, 4, 0],
    [0, 0, null],
  ])('1 − %i/%i = %s', (part, whole, out) => expect(freeRate(part, whole)).toBe(out));
  it.each([
    [5, 20, 0.25],
    [0, 0, null],
  ])('%i of %i = %s', (part, whole, out) => expect(share(part, whole)).toBe(out));
  it('hourOf truncates to the hour', () => expect(hourOf(now).toISOString()).toBe('2026-11-21T12:00:00.000Z'));
});
