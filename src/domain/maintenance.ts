/**
 * Maintenance windows (issue 68): a span when a project's monitors (or one monitor) are expected to fail. Their runs
 * are still recorded, but nothing is raised while the window is open; when it ends, the true state is reported: an
 * incident still open is raised from the failure that opened it, one that ended within the window is not raised at
 * all, and a recovery from an incident open before the window resolves it.
 */
import type { MonitorEffect } from './monitor-state.ts';

export interface MaintenanceWindow {
  from: number;
  to: number;
  /** the monitor's slug; null: every monitor of the project */
  monitor: string | null;
}

const covers = (w: MaintenanceWindow, slug: string, at: number) => (w.monitor === null || w.monitor === slug) && at >= w.from && at < w.to;

/** Whether an effect at `at` is held now: a window covers it and has not ended. */
export const heldAt = (windows: MaintenanceWindow[], slug: string, at: number, now: number) => windows.some((w) => covers(w, slug, at) && now < w.to);

/** Whether an effect at `at` fell in a window (ended or not). */
export const inWindow = (windows: MaintenanceWindow[], slug: string, at: number) => windows.some((w) => covers(w, slug, at));

/**
 * What a window's held effects report once it ended, the monitor's incident open now or not: open, the failures from
 * the one that opened it (all of them when it opened before the window); ended, the last recovery when the incident
 * it ended was open before the window, else nothing.
 */
export function afterWindow(effects: MonitorEffect[], incidentOpen: boolean): MonitorEffect[] {
  if (!incidentOpen) {
    // the incident that ended opened before the window only if no failure in it opened one
    const last = effects.findLastIndex((e) => e.kind === 'recovered');
    const openedInside = effects.slice(0, Math.max(0, last)).some((e) => e.kind === 'failed' && e.first);
    return last === -1 || openedInside ? [] : [effects[last]!];
  }
  const opened = effects.findLastIndex((e) => e.kind === 'failed' && e.first);
  return effects.slice(Math.max(0, opened)).filter((e) => e.kind === 'failed');
}

/** A window as a person sends it: `{from, to, monitor?}`, ISO times, `to` after `from`, at most 31 days. */
export function readWindow(raw: unknown): MaintenanceWindow {
  const b = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const time = (v: unknown, name: string) => {
    const ms = typeof v === 'string' ? Date.parse(v) : NaN;
    if (!Number.isFinite(ms)) throw new WindowInputError(`/${name}`, 'must be an ISO time such as 2026-12-01T02:00:00Z');
    return ms;
  };
  const from = time(b.from, 'from');
  const to = time(b.to, 'to');
  if (to <= from) throw new WindowInputError('/to', 'must be after from');
  if (to - from > 31 * 86_400_000) throw new WindowInputError('/to', 'a window lasts at most 31 days');
  if (b.monitor !== undefined && b.monitor !== null && typeof b.monitor !== 'string') throw new WindowInputError('/monitor', "must be a monitor's slug");
  return { from, to, monitor: typeof b.monitor === 'string' ? b.monitor : null };
}

export class WindowInputError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
  }
}
