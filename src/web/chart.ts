/**
 * The release page's two hourly charts (uPlot, loaded with this module only
 * when a release page opens): sessions by final status, and the crash-free
 * rates. Hours without sessions are drawn as 0 sessions and no rate.
 */
import uPlot from 'uplot';
import type { HourPoint } from './types.ts';

const HOUR = 3600;
/** Hours are shown in UTC, as on every page. */
const tzDate = (seconds: number) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC');
const STATUS_COLOURS = { ok: '#2f7d32', errored: '#b26a00', abnormal: '#6a4c93', crashed: '#c62828' } as const;

/** Every hour from `since` to `until`, with the series' figures where it has them. */
export function hourlyRows(series: HourPoint[], since: Date, until: Date) {
  const byHour = new Map(series.map((p) => [Date.parse(p.hour) / 1000, p]));
  const first = Math.floor(since.getTime() / 1000 / HOUR) * HOUR;
  const hours: number[] = [];
  for (let t = first; t <= until.getTime() / 1000; t += HOUR) hours.push(t);
  return hours.map((t) => ({ t, point: byHour.get(t) ?? null }));
}

export function drawCharts(targets: { sessions: HTMLElement; rates: HTMLElement }, series: HourPoint[], since: Date, until: Date): uPlot[] {
  const rows = hourlyRows(series, since, until);
  const x = rows.map((r) => r.t);
  const width = Math.max(320, targets.sessions.clientWidth);
  // Half an hour of margin each side, so the first and the current hour are not drawn on the frame.
  const xRange = (): [number, number] => [x[0]! - HOUR / 2, x[x.length - 1]! + HOUR / 2];
  const statuses = Object.keys(STATUS_COLOURS) as (keyof typeof STATUS_COLOURS)[];
  const sessions = new uPlot(
    {
      title: 'Sessions per hour, by final status',
      width,
      height: 260,
      tzDate,
      series: [{}, ...statuses.map((s) => ({ label: s === 'ok' ? 'healthy' : s, stroke: STATUS_COLOURS[s], width: 2, points: { show: true, size: 5 } }))],
      axes: [{}, { label: 'sessions' }],
      scales: { x: { time: true, range: xRange } },
    },
    [x, ...statuses.map((s) => rows.map((r) => r.point?.sessions[s] ?? 0))],
    targets.sessions,
  );
  const pct = (rate: number | null | undefined) => (rate === null || rate === undefined ? null : rate * 100);
  // the axis fitted to the rates shown: 93–99% reads as a change, not a flat line at the top of 0–100
  const shown = rows.flatMap((r) => [pct(r.point?.crash_free_sessions), pct(r.point?.crash_free_users)]).filter((v): v is number => v !== null);
  const floor = shown.length ? Math.max(0, Math.floor(Math.min(...shown) - Math.max(1, (100 - Math.min(...shown)) * 0.2))) : 0;
  const rates = new uPlot(
    {
      title: 'Crash-free rate per hour',
      width,
      height: 220,
      series: [
        {},
        { label: 'crash-free sessions %', stroke: '#1565c0', width: 2, spanGaps: false, points: { show: true, size: 6 } },
        { label: 'crash-free users %', stroke: '#00838f', width: 2, dash: [6, 4], spanGaps: false, points: { show: true, size: 5 } },
      ],
      tzDate,
      axes: [{}, { label: '%' }],
      scales: { x: { time: true, range: xRange }, y: { range: [floor, 100] } },
    },
    [x, rows.map((r) => pct(r.point?.crash_free_sessions)), rows.map((r) => pct(r.point?.crash_free_users))],
    targets.rates,
  );
  return [sessions, rates];
}
