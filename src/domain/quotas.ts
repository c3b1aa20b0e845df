/**
 * Quotas and spike protection per project (issue 51), as pure functions: the windows items are counted in, and
 * whether one more item of a category is taken given the counts so far. Error events count against the events
 * quotas and spike protection, sessions against their own quotas; sign-in attempts against none (they are the
 * security feed: refused only when a store is full, src/domain/admission.ts).
 *
 * Windows are fixed (a minute, an hour, a calendar month in UTC), as Sentry's and Bugsink's quotas are, so a
 * refusal says exactly when the window ends. Spike protection holds a project to a ceiling per 10 seconds: ten
 * times its usual rate (the mean of its last 24 complete hours), and never under a floor, so a new project or a
 * quiet one is not held back by its own quiet past.
 */

import type { Quotas as QuotasAnswer } from '../generated/schema-types.ts';

export type QuotaCategory = 'error' | 'session' | 'transaction' | 'span' | 'log_item';
export type QuotaWindow = 'minute' | 'hour' | 'month';

/** A project's quotas and spike protection: schemas/answers/quotas.json, each field documented there. */
export type Quotas = QuotasAnswer;

/**
 * Generous: above what one host takes (about 1,000 error events and 5,000 sessions a second), so a project reaches
 * them only when something sends far more than it should; a month is not limited unless an owner says so.
 */
export const DEFAULT_QUOTAS: Quotas = {
  events_per_minute: 120_000,
  events_per_hour: 2_000_000,
  events_per_month: null,
  sessions_per_minute: 600_000,
  sessions_per_hour: null,
  sessions_per_month: null,
  transactions_per_minute: 120_000,
  transactions_per_hour: null,
  transactions_per_month: null,
  spans_per_minute: 3_000_000,
  spans_per_hour: null,
  spans_per_month: null,
  log_items_per_minute: 1_200_000,
  log_items_per_hour: null,
  log_items_per_month: null,
  spike_protection: true,
};

export function quotasOf(stored: Partial<Quotas> | undefined, set: Partial<Quotas> = {}): Quotas {
  return { ...DEFAULT_QUOTAS, ...stored, ...set };
}

/** Spike protection: the ceiling is `factor` times the usual rate, never under the floor (SPIKE_FLOOR_PER_MINUTE), per `windowMs`. */
export const SPIKE = { factor: 10, floorPerMinute: 60_000, windowMs: 10_000, usualHours: 24, calmMs: 10 * 60_000 } as const;

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** The index of the window `at` falls in (a month: year × 12 + month, UTC). */
export function windowIndex(window: QuotaWindow | 'spike', at: number): number {
  if (window === 'month') {
    const d = new Date(at);
    return d.getUTCFullYear() * 12 + d.getUTCMonth();
  }
  return Math.floor(at / windowMs(window));
}

/** When the window of index `index` ends (ms). */
export function windowEnd(window: QuotaWindow | 'spike', index: number): number {
  if (window === 'month') return Date.UTC(Math.floor(index / 12), (index % 12) + 1, 1);
  return (index + 1) * windowMs(window);
}

function windowMs(window: 'minute' | 'hour' | 'spike'): number {
  return window === 'minute' ? MINUTE_MS : window === 'hour' ? HOUR_MS : SPIKE.windowMs;
}

/** What each category's quotas are named by in a project's settings (`events_per_minute`, …). */
const QUOTA_FIELD = { error: 'events', session: 'sessions', transaction: 'transactions', span: 'spans', log_item: 'log_items' } as const;

/** The limit of a category in a window. */
export function limitOf(q: Quotas, category: QuotaCategory, window: QuotaWindow): number | null {
  return q[`${QUOTA_FIELD[category]}_per_${window}`] ?? null;
}

/** Items a project may send in one spike window: ten times its usual rate, and at least the floor's share. */
export function spikeCeiling(usualPerHour: number, floorPerMinute: number = SPIKE.floorPerMinute): number {
  const perWindow = (rate: number, per: number) => (rate * SPIKE.windowMs) / per;
  return Math.ceil(Math.max(perWindow(floorPerMinute, MINUTE_MS), SPIKE.factor * perWindow(usualPerHour, HOUR_MS)));
}

/** The mean of the complete hours before this one (missing hours count as none). */
export function usualPerHour(pastHours: readonly number[]): number {
  return pastHours.reduce((a, b) => a + b, 0) / SPIKE.usualHours;
}

export type QuotaReason = 'quota_minute' | 'quota_hour' | 'quota_month' | 'spike';
export type QuotaVerdict = { admit: true } | { admit: false; reason: QuotaReason; retryAfter: number };

/** What a project has taken so far in the windows `at` falls in. */
export interface WindowCounts {
  minute: number;
  hour: number;
  month: number;
  /** error events in the current spike window */
  spike: number;
}

/**
 * Whether `n` more items of the category are taken: the first window whose limit they would pass refuses, with
 * the seconds until it ends; spike protection (error events) last, with its ceiling per 10 seconds (spikeCeiling).
 */
export function quotaVerdict(counts: WindowCounts, q: Quotas, category: QuotaCategory, n: number, at: number, ceiling: number): QuotaVerdict {
  const seconds = (window: QuotaWindow | 'spike') => Math.max(1, Math.ceil((windowEnd(window, windowIndex(window, at)) - at) / 1000));
  for (const window of ['minute', 'hour', 'month'] as const) {
    const limit = limitOf(q, category, window);
    if (limit !== null && counts[window] + n > limit) return { admit: false, reason: `quota_${window}`, retryAfter: seconds(window) };
  }
  if (category === 'error' && q.spike_protection && counts.spike + n > ceiling) return { admit: false, reason: 'spike', retryAfter: seconds('spike') };
  return { admit: true };
}
