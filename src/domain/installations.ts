/**
 * A bound installation watched with no set-up (issue 68): it polls its configuration about every ten minutes
 * (spec 4.2), so one not heard from (no poll, no request with its key and instance) for longer than the project's
 * setting (30 minutes by default: three missed polls) is reported silent, and heard again when it next calls.
 */
import type { IncidentChange } from './incidents.ts';

export const DEFAULT_SILENT_MINUTES = 30;
const MINUTE = 60_000;

export type Silence = { kind: 'silent'; since: number } | { kind: 'heard'; since: number };

/**
 * What the minute `now` (ms) decides of an installation last heard at `poll`/`ingest` (ms), reported silent since
 * `silent` (null: not reported): silent once unheard for `minutes`, unless Lookout itself could not hear it for part
 * of that time (`heardAll`: an API process was up every minute of a span); heard again once it called after the
 * silence reported began. Null: nothing changes.
 */
export function judgeSilence(h: { poll: number | null; ingest: number | null; silent: number | null }, minutes: number, now: number, heardAll: (from: number, to: number) => boolean): Silence | null {
  const last = Math.max(h.poll ?? -Infinity, h.ingest ?? -Infinity);
  if (last === -Infinity) return null;
  if (h.silent !== null) return last > h.silent ? { kind: 'heard', since: h.silent } : null;
  if (now - last < minutes * MINUTE) return null;
  if (!heardAll(now - minutes * MINUTE, now)) return null;
  return { kind: 'silent', since: last };
}

/** What a silence does to the installation's issue: one per installation, its silences the occurrences. */
export function installationIncident(instance: string, silence: Silence, at: number, minutes: number): IncidentChange {
  const base = {
    kind: 'installation' as const,
    fingerprint: `installation:${instance}`,
    title: `Installation silent: ${instance}`,
    level: 'warning' as const,
    environment: null,
    at,
  };
  if (silence.kind === 'heard') return { ...base, culprit: 'heard again', change: 'recovered', id: `heard:${silence.since}`, trigger: null };
  return {
    ...base,
    culprit: `no configuration poll or request for ${minutes} minutes`,
    change: 'occurred',
    id: `silent:${silence.since}`,
    trigger: { event: 'installation.silent', instance, last_heard: new Date(silence.since).toISOString(), minutes },
  };
}
