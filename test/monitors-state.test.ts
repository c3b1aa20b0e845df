/**
 * Monitor environments' state in real Redis (src/state/monitors.state.ts): moved by the pure state machine and
 * saved only if no one saved meanwhile, so two workers applying one monitor's check-ins at once lose none, and a
 * check-in or a minute applied again changes nothing.
 */
import crypto from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { MONITOR_DEFAULTS, type CheckIn, type MonitorConfig } from '../src/domain/checkins.ts';
import { applyCheckIn, applyTick } from '../src/domain/monitor-state.ts';
import { nextRun } from '../src/domain/schedule.ts';
import { makeMonitorsState } from '../src/state/monitors.state.ts';

let redis: Redis;
beforeAll(() => {
  redis = new Redis(inject('redisUrl'));
});
afterAll(async () => {
  await redis?.quit();
});

const M = 60_000;
const config: MonitorConfig = { ...MONITOR_DEFAULTS, schedule: { type: 'crontab', value: '* * * * *' }, failure_issue_threshold: 1000 };
const checkIn = (status: CheckIn['status']): CheckIn => ({ check_in_id: null, slug: 'job', status, duration_ms: 1000, environment: 'production', release: null, config: null, trace_id: null });
const monitor = { project: 7, slug: 'job', environment: 'production' };

it('two workers applying 40 check-ins of one monitor at once count every one, each once', async () => {
  const state = makeMonitorsState(redis, { prefix: `mon-test-${crypto.randomUUID()}` });
  const apply = (n: number) =>
    state.update(monitor, { checkIn: `c${n}` }, (s) => applyCheckIn(s, config, checkIn('error'), { at: 10 * M + n, order: `c${String(n).padStart(3, '0')}` }, nextRun, `run${n}`));
  await Promise.all(Array.from({ length: 40 }, (_, n) => apply(n)));
  // the same check-ins again (a job retried): nothing more
  const again = await Promise.all(Array.from({ length: 40 }, (_, n) => apply(n)));
  expect(again.every((a) => a === null)).toBe(true);
  expect((await state.read(monitor)).failures_in_row).toBe(40);
  expect(await state.projects()).toEqual([7]);
});

it('a minute of the clock is applied once, and the monitor is listed as due by its deadline', async () => {
  const state = makeMonitorsState(redis, { prefix: `mon-test-${crypto.randomUUID()}` });
  await state.update(monitor, { checkIn: 'c1' }, (s) => applyCheckIn(s, config, checkIn('ok'), { at: 10 * M + 1000, order: 'c1' }, nextRun, 'r1'));
  expect(await state.due(7, 11 * M, 10)).toEqual([]);
  expect(await state.due(7, 12 * M, 10)).toEqual([{ slug: 'job', environment: 'production' }]);
  const tick = () => state.update(monitor, { minute: 12 * M }, (s) => applyTick(s, config, 12 * M, nextRun, () => true, () => crypto.randomUUID()));
  const [first, second] = await Promise.all([tick(), tick()]);
  expect([first, second].filter((a) => a !== null)).toHaveLength(1);
  expect((await state.read(monitor)).failures_in_row).toBe(1);
  expect(await tick()).toBeNull();
});

it('what a move changed waits in its outbox until settled; one left over is found again, and settling keeps what came meanwhile', async () => {
  const state = makeMonitorsState(redis, { prefix: `mon-test-${crypto.randomUUID()}` });
  const apply = (n: number) => state.update(monitor, { checkIn: `c${n}` }, (s) => applyCheckIn(s, config, checkIn('error'), { at: 10 * M + n, order: `c${String(n).padStart(3, '0')}` }, nextRun, `run${n}`));
  const first = await apply(1);
  expect(first?.outbox.map((i) => i.key)).toEqual(['c1']);
  const second = await apply(2);
  // the first was never settled (its worker died): the second carries both
  expect(second?.outbox.map((i) => i.key)).toEqual(['c1', 'c2']);
  expect((await state.unsettled(7, Date.now() + 1, 10)).map((u) => u.outbox.length)).toEqual([2]);
  await state.settle(monitor, ['c1']);
  const left = await state.unsettled(7, Date.now() + 1, 10);
  expect(left.map((u) => u.outbox.map((i) => i.key))).toEqual([['c2']]);
  expect(left[0]!.outbox[0]!.records).toMatchObject([{ id: 'run2', status: 'error' }]);
  await state.settle(monitor, ['c2']);
  expect(await state.unsettled(7, Date.now() + 1, 10)).toEqual([]);
  expect((await state.read(monitor)).failures_in_row).toBe(2);
});
