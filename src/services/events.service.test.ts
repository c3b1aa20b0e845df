import { describe, expect, it } from 'vitest';
import { attemptGroupKey } from '../domain/client-keys.ts';
import { entryOfJob, jobEvent, type EventEntry } from '../queues/jobs/events.job.ts';

const at = new Date('2026-11-25T04:32:00.123Z');
const receivedAt = new Date('2026-11-25T04:32:01.000Z');
const group = { id: 'mwvmn3k-0001', received_at: receivedAt.toISOString() };

const attempt: EventEntry = {
  _id: '7:0123456789abcdef0123456789abcdef',
  project_id: 7,
  event_id: '0123456789abcdef0123456789abcdef',
  batch: group.id,
  kind: 'security',
  security_kind: 'login_failed',
  actor: 'ana@example.com',
  ip: '10.0.0.5',
  group_key: attemptGroupKey('ana@example.com', '10.0.0.5'),
  release: null,
  environment: null,
  company: null,
  at,
  received_at: receivedAt,
  level: 'error',
  title: '',
  culprit: '',
  exception_type: null,
};

const errorEvent: EventEntry = {
  _id: '7:fedcba9876543210fedcba9876543210',
  project_id: 7,
  event_id: 'fedcba9876543210fedcba9876543210',
  batch: group.id,
  kind: 'error',
  fingerprint: 'f00d',
  release: 'shop@1.2.0',
  environment: 'production',
  company: 'acme',
  at,
  received_at: receivedAt,
  level: 'warning',
  title: 'TypeError: x is undefined',
  culprit: 'checkout(cart.js)',
  exception_type: 'TypeError',
};

describe('the job form of an event', () => {
  it.each([
    ['a sign-in attempt', attempt],
    ['an attempt without an address', { ...attempt, ip: null, group_key: attemptGroupKey('ana@example.com', null) }],
    ['an attempt without an actor', { ...attempt, actor: null, group_key: attemptGroupKey(null, '10.0.0.5') }],
    ['an error event', errorEvent],
    ['an error event with defaults', { ...errorEvent, release: null, environment: null, company: null, level: 'error', culprit: '', exception_type: null }],
  ])('%s comes back whole through JSON', (_, entry) => {
    const carried = JSON.parse(JSON.stringify(jobEvent(entry))) as ReturnType<typeof jobEvent>;
    expect(entryOfJob(carried, group)).toEqual(entry);
  });

  it('leaves out what the worker derives and the defaults', () => {
    expect(jobEvent(attempt)).toEqual({ project_id: 7, event_id: attempt.event_id, kind: 'security', security_kind: 'login_failed', actor: 'ana@example.com', ip: '10.0.0.5', at });
  });

  it('reads an entry carried whole (a job added before the job form)', () => {
    const whole = JSON.parse(JSON.stringify(errorEvent)) as ReturnType<typeof jobEvent>;
    expect(entryOfJob(whole, group)).toEqual(errorEvent);
  });
});
