import { describe, expect, it } from 'vitest';
import type { MonitorEffect } from './monitor-state.ts';
import { afterWindow, heldAt, readWindow } from './maintenance.ts';

const failed = (at: number, first: boolean): MonitorEffect => ({ kind: 'failed', id: `f${at}`, reason: 'missed', at, first, failures: 1 });
const recovered = (at: number): MonitorEffect => ({ kind: 'recovered', id: `r${at}`, at, since: 0 });

describe('afterWindow', () => {
  it.each<[string, MonitorEffect[], boolean, string[]]>([
    ['an incident opened in the window and still open: raised from its opening', [failed(1, true), failed(2, false)], true, ['f1', 'f2']],
    ['opened, ended and opened again: only the last', [failed(1, true), recovered(2), failed(3, true), failed(4, false)], true, ['f3', 'f4']],
    ['open before the window, failing in it: its failures counted', [failed(1, false), failed(2, false)], true, ['f1', 'f2']],
    ['opened and ended within the window: nothing', [failed(1, true), recovered(2)], false, []],
    ['open before the window, recovered in it: the recovery', [failed(1, false), recovered(2)], false, ['r2']],
    ['nothing held', [], false, []],
  ])('%s', (_what, effects, open, ids) => {
    expect(afterWindow(effects, open).map((e) => e.id)).toEqual(ids);
  });
});

describe('heldAt and readWindow', () => {
  const windows = [
    { from: 100, to: 200, monitor: null },
    { from: 300, to: 400, monitor: 'backup' },
  ];
  it.each([
    ['any monitor, inside an open window', 'report', 150, 150, true],
    ['the window ended', 'report', 150, 250, false],
    ['another monitor’s window', 'report', 350, 350, false],
    ['its own window', 'backup', 350, 350, true],
    ['outside every window', 'backup', 250, 250, false],
  ])('%s', (_what, slug, at, now, held) => {
    expect(heldAt(windows, slug, at, now)).toBe(held);
  });
  it('reads ISO times, refuses a window that ends first or lasts over 31 days, naming the field', () => {
    expect(readWindow({ from: '2026-12-01T02:00:00Z', to: '2026-12-01T04:00:00Z', monitor: 'backup' })).toEqual({ from: Date.parse('2026-12-01T02:00:00Z'), to: Date.parse('2026-12-01T04:00:00Z'), monitor: 'backup' });
    expect(() => readWindow({ from: '2026-12-01T02:00:00Z', to: '2026-12-01T01:00:00Z' })).toThrow(expect.objectContaining({ path: '/to' }));
    expect(() => readWindow({ from: '2026-12-01T02:00:00Z', to: '2027-01-05T02:00:00Z' })).toThrow(expect.objectContaining({ path: '/to' }));
    expect(() => readWindow({ from: 'soon', to: '2026-12-01T01:00:00Z' })).toThrow(expect.objectContaining({ path: '/from' }));
  });
});
