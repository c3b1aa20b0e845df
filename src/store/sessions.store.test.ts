/** A request's sessions stored as columns read back as they were sent, and requests stored as objects still read. */
import { describe, expect, it } from 'vitest';
import type { AggregateUpdate, SessionUpdate } from '../domain/sessions.ts';
import { packRequest, unpackRequest } from './sessions.store.ts';

const at = (s: string) => new Date(s);
const session = (over: Partial<SessionUpdate>): SessionUpdate => ({
  sid: 'a1b2c3d4',
  release: 'shop@1.0.0',
  environment: 'production',
  status: 'ok',
  errors: 0,
  did: null,
  started: at('2026-11-24T06:00:00.000Z'),
  ...over,
});
const aggregate: AggregateUpdate = { release: 'shop@1.0.0', environment: 'production', started: at('2026-11-24T05:00:00.000Z'), did: null, counts: { ok: 3, errored: 1, abnormal: 0, crashed: 1 } };

describe('packRequest / unpackRequest', () => {
  const cases: [string, SessionUpdate[], AggregateUpdate[]][] = [
    ['no sessions, an aggregate', [], [aggregate]],
    ['one session', [session({})], []],
    [
      'every status, two releases and environments, users and none, starts before and after the first',
      [
        session({ sid: 'sid-0001', status: 'ok', did: 'ab12cd34ef56ab78' }),
        session({ sid: 'sid-0002', status: 'errored', errors: 3, release: 'shop@1.1.0', started: at('2026-11-24T05:59:59.250Z') }),
        session({ sid: 'sid-0003', status: 'abnormal', environment: 'staging', did: 'ab12cd34ef56ab78', started: at('2026-11-29T06:00:00.001Z') }),
        session({ sid: 'sid-0004', status: 'crashed', release: 'shop@1.1.0', environment: 'staging', did: '' }),
      ],
      [aggregate],
    ],
  ];
  for (const [name, sessions, aggregates] of cases) {
    it(name, () => {
      const request = packRequest(7, sessions, aggregates);
      expect(request.project_id).toBe(7);
      expect(unpackRequest(request)).toEqual({ sessions, aggregates });
    });
  }

  it('reads a request stored before the columns', () => {
    const sessions = [session({ did: 'ab12cd34ef56ab78' })];
    const old = { project_id: 7, entries: JSON.stringify({ sessions, aggregates: [aggregate] }) };
    expect(unpackRequest(old)).toEqual({ sessions, aggregates: [aggregate] });
  });
});
