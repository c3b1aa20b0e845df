import { describe, expect, it } from 'vitest';
import { applyCheck, judgeAnswer, NEW_PROBE, PROBE_DEFAULTS, readProbeConfig, type CheckResult, type ProbeConfig, type ProbeState } from './probes.ts';

const config: ProbeConfig = { ...PROBE_DEFAULTS, url: 'https://shop.example/health' };
const DAY = 86_400_000;
const check = (at: number, ok: boolean, cert: number | null = null): CheckResult => ({ at, due: at, ok, reason: ok ? null : 'status_500', status: ok ? 200 : 500, latency_ms: 10, cert_expires: cert });

describe('readProbeConfig', () => {
  it('takes a URL with Sentry-like defaults, and statuses as ranges', () => {
    expect(readProbeConfig({ url: 'https://shop.example/health', expect_status: '200-299, 301' })).toMatchObject({
      method: 'GET',
      interval_min: 5,
      failure_threshold: 3,
      recovery_threshold: 1,
      expect_status: [
        { from: 200, to: 299 },
        { from: 301, to: 301 },
      ],
    });
  });
  it.each([
    [{ url: 'ftp://x.example/' }, '/url'],
    [{ url: 'https://user:pw@x.example/' }, '/url'],
    [{ url: 'https://x.example/', method: 'POST' }, '/method'],
    [{ url: 'https://x.example/', expect_status: '2xx' }, '/expect_status'],
    [{ url: 'https://x.example/', expect_status: '300-200' }, '/expect_status'],
    [{ url: 'https://x.example/', interval_min: 0 }, '/interval_min'],
    [{ url: 'https://x.example/', timeout_s: 31 }, '/timeout_s'],
    [{ url: 'https://x.example/', keyword: '' }, '/keyword'],
  ])('%o is refused naming %s', (raw, path) => {
    expect(() => readProbeConfig(raw)).toThrow(expect.objectContaining({ path }));
  });
});

describe('judgeAnswer', () => {
  it.each([
    [200, 'ok', null],
    [302, 'ok', null],
    [500, 'ok', 'status_500'],
    [200, 'maintenance', 'keyword_missing'],
  ])('%i with "%s": %s', (status, body, reason) => {
    expect(judgeAnswer({ ...config, keyword: 'ok' }, status, body)).toEqual({ ok: reason === null, reason });
  });
});

describe('applyCheck', () => {
  const run = (checks: CheckResult[], c: ProbeConfig = config) => {
    let state: ProbeState = NEW_PROBE;
    const effects = [];
    for (const r of checks) {
      const moved = applyCheck(state, c, r);
      state = moved.state;
      effects.push(...moved.effects);
    }
    return { state, effects };
  };
  it('down after 3 failed checks in a row, counted after, up again after 1 good one', () => {
    const { state, effects } = run([check(1, true), check(2, false), check(3, false), check(4, true), check(5, false), check(6, false), check(7, false), check(8, false), check(9, true)]);
    expect(effects.map((e) => e.kind)).toEqual(['down', 'still_down', 'up']);
    expect(effects[2]).toEqual({ kind: 'up', at: 9, since: 7 });
    expect(state).toMatchObject({ status: 'up', down_since: null });
  });
  it('a certificate is warned of at 14 days, then at 3, once each; a renewed one starts over', () => {
    const expires = 100 * DAY;
    const { effects } = run([check(80 * DAY, true, expires), check(87 * DAY, true, expires), check(97 * DAY, true, expires), check(98 * DAY, true, expires), check(98 * DAY, true, 200 * DAY), check(190 * DAY, true, 200 * DAY)]);
    expect(effects).toEqual([
      { kind: 'certificate', at: 87 * DAY, expires, days: 14 },
      { kind: 'certificate', at: 97 * DAY, expires, days: 3 },
      { kind: 'certificate', at: 190 * DAY, expires: 200 * DAY, days: 14 },
    ]);
  });
});
