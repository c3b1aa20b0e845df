import { describe, expect, it } from 'vitest';
import { CheckInError, checkInId, checkInStatus, monitorSlug, readCheckIn, readCheckInQuery, readMonitorConfig, readPing } from './checkins.ts';

const anyCrontab = (e: string) => !e.includes('x');
const errorPath = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    if (err instanceof CheckInError) return err.path;
    throw err;
  }
  return null;
};

describe('monitorSlug', () => {
  it.each([
    ['nightly-backup', 'nightly-backup'],
    ['Nightly Backup', 'nightly-backup'],
    ['  report: daily!  ', 'report-daily'],
    ['Crème brûlée', 'creme-brulee'],
    ['a'.repeat(60), 'a'.repeat(50)],
    [`${'a'.repeat(49)}-b`, 'a'.repeat(49)],
    ['under_score', 'under_score'],
  ])('%j → %j', (raw, slug) => {
    expect(monitorSlug(raw)).toBe(slug);
  });

  it.each([[''], ['!!!'], [null], [42]])('refuses %j', (raw) => {
    expect(errorPath(() => monitorSlug(raw))).toBe('/monitor_slug');
  });
});

describe('statuses and ids', () => {
  it('takes the three statuses, records a client-sent missed as unknown, refuses any other word', () => {
    expect(['in_progress', 'ok', 'error', 'missed'].map((s) => checkInStatus(s))).toEqual(['in_progress', 'ok', 'error', 'unknown']);
    expect(errorPath(() => checkInStatus('success'))).toBe('/status');
    expect(errorPath(() => checkInStatus(undefined))).toBe('/status');
  });

  it('reads a UUID with or without dashes; the nil UUID and none are the latest open run', () => {
    expect(checkInId('A460C25F-F255-4577-B920-FCFACAE4E5EB')).toBe('a460c25ff2554577b920fcfacae4e5eb');
    expect(checkInId('00000000-0000-0000-0000-000000000000')).toBeNull();
    expect(checkInId(undefined)).toBeNull();
    expect(checkInId(null)).toBeNull();
    expect(errorPath(() => checkInId('not-a-uuid'))).toBe('/check_in_id');
  });
});

describe('readMonitorConfig', () => {
  it('keeps what is set and leaves the rest to the monitor', () => {
    expect(readMonitorConfig({ schedule: { type: 'crontab', value: ' 0  *  * * * ' }, timezone: 'Europe/Berlin', max_runtime: null }, '/monitor_config', anyCrontab)).toEqual({
      schedule: { type: 'crontab', value: '0 * * * *' },
      timezone: 'Europe/Berlin',
    });
    expect(readMonitorConfig({ schedule: { type: 'interval', value: 5, unit: 'day' }, checkin_margin: 5, failure_issue_threshold: 3 }, '', anyCrontab)).toEqual({
      schedule: { type: 'interval', value: 5, unit: 'day' },
      checkin_margin: 5,
      failure_issue_threshold: 3,
    });
  });

  it.each([
    [{ schedule: { type: 'crontab', value: '0 * * *' } }, '/c/schedule/value'],
    [{ schedule: { type: 'crontab', value: 'x * * * *' } }, '/c/schedule/value'],
    [{ schedule: { type: 'interval', value: 0, unit: 'day' } }, '/c/schedule/value'],
    [{ schedule: { type: 'interval', value: 1, unit: 'fortnight' } }, '/c/schedule/unit'],
    [{ schedule: { type: 'weekly' } }, '/c/schedule/type'],
    [{ schedule: 'daily' }, '/c/schedule'],
    [{ checkin_margin: 0 }, '/c/checkin_margin'],
    [{ max_runtime: 40_321 }, '/c/max_runtime'],
    [{ max_runtime: 1.5 }, '/c/max_runtime'],
    [{ timezone: 'Mars/Olympus' }, '/c/timezone'],
    [{ failure_issue_threshold: 721 }, '/c/failure_issue_threshold'],
    [{ recovery_threshold: 0 }, '/c/recovery_threshold'],
  ])('refuses %j at its field', (raw, path) => {
    expect(errorPath(() => readMonitorConfig(raw, '/c', anyCrontab))).toBe(path);
  });
});

describe('readCheckIn', () => {
  it('reads the envelope item as the SDKs send it', () => {
    const item = {
      check_in_id: 'a460c25ff2554577b920fcfacae4e5eb',
      monitor_slug: 'my-monitor',
      status: 'ok',
      duration: 21.5,
      environment: 'staging',
      release: '1.0',
      monitor_config: { schedule: { type: 'crontab', value: '* * * * *' }, checkin_margin: null },
      contexts: { trace: { trace_id: '8F431B7A-A084-41BB-BD5A-0100FD91F9FE' } },
      type: 'check_in',
      unknown_field: true,
    };
    expect(readCheckIn(item, { validCrontab: anyCrontab })).toEqual({
      check_in_id: 'a460c25ff2554577b920fcfacae4e5eb',
      slug: 'my-monitor',
      status: 'ok',
      duration_ms: 21_500,
      environment: 'staging',
      release: '1.0',
      config: { schedule: { type: 'crontab', value: '* * * * *' } },
      trace_id: '8f431b7aa08441bbbd5a0100fd91f9fe',
    });
  });

  it('takes the path slug over the body, production when no environment, null for the optional fields', () => {
    const read = readCheckIn({ monitor_slug: 'other', status: 'in_progress', environment: null, duration: null }, { slug: 'from-path', validCrontab: anyCrontab });
    expect(read).toMatchObject({ slug: 'from-path', environment: 'production', duration_ms: null, check_in_id: null, config: null, release: null });
  });

  it.each([
    [{ monitor_slug: '', status: 'ok' }, '/monitor_slug'],
    [{ monitor_slug: 'a', status: 'done' }, '/status'],
    [{ monitor_slug: 'a', status: 'ok', duration: -1 }, '/duration'],
    [{ monitor_slug: 'a', status: 'ok', environment: 'e'.repeat(65) }, '/environment'],
    [{ monitor_slug: 'a', status: 'ok', monitor_config: { timezone: 'Nowhere' } }, '/monitor_config/timezone'],
    [[], ''],
  ])('refuses %j at its field', (raw, path) => {
    expect(errorPath(() => readCheckIn(raw, { validCrontab: anyCrontab }))).toBe(path);
  });

  it("reads the /cron/ endpoint's query, naming a bad field without a leading slash", () => {
    expect(readCheckInQuery({ status: 'ok', duration: '1.25', environment: 'prod', check_in_id: 'A460C25FF2554577B920FCFACAE4E5EB' }, 'job')).toEqual({
      check_in_id: 'a460c25ff2554577b920fcfacae4e5eb',
      slug: 'job',
      status: 'ok',
      duration_ms: 1250,
      environment: 'prod',
      release: null,
      config: null,
      trace_id: null,
    });
    expect(errorPath(() => readCheckInQuery({}, 'job'))).toBe('status');
    expect(errorPath(() => readCheckInQuery({ status: 'ok', duration: 'long' }, 'job'))).toBe('duration');
  });
});

describe('readPing', () => {
  it.each([
    ['', 'ok'],
    ['0', 'ok'],
    ['start', 'in_progress'],
    ['fail', 'error'],
    ['1', 'error'],
    ['255', 'error'],
    ['log', 'unknown'],
  ])('/%s is %s', (signal, status) => {
    expect(readPing(signal, {}, 'backup')).toMatchObject({ slug: 'backup', status, check_in_id: null, environment: 'production' });
  });
  it.each(['256', '01', '-1', 'ok', 'START'])('/%s is refused, naming the signal', (signal) => {
    expect(() => readPing(signal, {}, 'backup')).toThrow(expect.objectContaining({ path: 'signal' }));
  });
  it('pairs a run by its rid, and names a bad one', () => {
    expect(readPing('start', { rid: '3F2504E0-4F89-11D3-9A0C-0305E82C3301', environment: 'batch' }, 'b')).toMatchObject({ check_in_id: '3f2504e04f8911d39a0c0305e82c3301', environment: 'batch' });
    expect(() => readPing('', { rid: 'run-7' }, 'b')).toThrow(expect.objectContaining({ path: 'rid' }));
  });
});
