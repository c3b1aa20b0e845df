/** The validation messages a client developer reads, pinned: field, what is allowed, alternatives collapsed. */
import { describe, expect, it } from 'vitest';
import { makeValidator } from './validator.ts';

const validator = makeValidator();
const EVENT = { event_id: 'a'.repeat(32), timestamp: '2026-11-22T10:00:00Z' };

describe('validation messages', () => {
  it.each([
    ['an unknown issue status lists the allowed ones', 'issue-status', { status: 'done' }, [{ path: '/status', message: 'must be one of: unresolved, resolved, ignored' }]],
    [
      'a security event without actor or actor_id: one message for the two',
      'event',
      { ...EVENT, security: { kind: 'login_failed' } },
      [{ path: '/security', message: 'send actor or actor_id' }],
    ],
    [
      'a bad security event: each field once, formats named',
      'event',
      { event_id: 'XYZ', timestamp: 'yesterday', security: { kind: 'login_guessed', ip: '1.2.3' } },
      [
        { path: '/event_id', message: 'must be 32 lowercase hex characters, fresh per event' },
        { path: '/timestamp', message: 'must be an RFC 3339 time such as 2026-11-22T10:00:00Z' },
        { path: '/security', message: 'send actor or actor_id' },
        { path: '/security/kind', message: 'must be one of: login_failed, login_succeeded, login_blocked, password_reset_requested, privilege_granted' },
        { path: '/security/ip', message: 'must be an IPv4 address or an IPv6 address' },
      ],
    ],
    ['an event with no content says what to send', 'event', EVENT, [{ path: '/', message: 'send security, exception or message' }]],
    ['a missing field', 'event', { timestamp: EVENT.timestamp, message: 'x' }, [{ path: '/event_id', message: 'is required' }]],
    [
      'an unknown property names the allowed ones',
      'contacts',
      { companies: [], extra: 1 },
      [{ path: '/extra', message: 'is not an allowed property (allowed: companies)' }],
    ],
    ['a wrong type in words', 'contacts', { companies: 'all' }, [{ path: '/companies', message: 'must be an array' }]],
    ['a string too long', 'session', { sid: 'abcdefgh', status: 'ok', release: 'r'.repeat(201) }, [{ path: '/release', message: 'must be at most 200 characters long' }]],
    ['a time in neither form', 'session', { sid: 'abcdefgh', status: 'ok', started: true }, [{ path: '/started', message: 'must be a string or a number' }]],
    [
      'both list forms at once',
      'sessions',
      { sessions: [], aggregates: [] },
      [{ path: '/', message: 'must not hold both sessions and aggregates: send one of them' }],
    ],
    ['not an object', 'sessions', [], [{ path: '/', message: 'must be an object' }]],
    ['too many entries', 'sessions', { sessions: Array.from({ length: 101 }, () => ({})) }, [{ path: '/sessions', message: 'must hold at most 100 items' }]],
  ])('%s', (_name, schema, body, expected) => {
    expect(validator.problems(schema, body)).toEqual(expected);
  });

  it('the 400 message names the first problems and counts the rest', () => {
    expect(() => validator.check('event', { event_id: 'XYZ', timestamp: 'yesterday', security: { kind: 'login_guessed', ip: '1.2.3' } })).toThrow(
      expect.objectContaining({
        status: 400,
        reason: 'invalid_body',
        message:
          '/event_id: must be 32 lowercase hex characters, fresh per event; /timestamp: must be an RFC 3339 time such as 2026-11-22T10:00:00Z; /security: send actor or actor_id; and 2 more (see errors)',
      }),
    );
  });
});
