/**
 * Incidents as issues (issue 68): a monitor that fails (and later a probe that finds a site down, an installation
 * gone silent) opens an incident, and each incident is one issue, found again by its fingerprint: each failure while
 * it is open is an occurrence, the recovery resolves it, and a failure after that regresses it by the issue rule
 * (src/domain/issue-lifecycle.ts). Opening and ending an incident are the notifications; the failures in between are
 * only counted. Pure: src/services/incidents.service.ts applies a change (apply-incident-3.lua).
 */
import type { MonitorEffect } from './monitor-state.ts';
import type { Trigger } from './notifications.ts';

export type IncidentKind = 'monitor' | 'installation' | 'uptime';

/** One change to an incident's issue. */
export interface IncidentChange {
  kind: IncidentKind;
  fingerprint: string;
  title: string;
  /** what the newest failure was */
  culprit: string;
  level: 'error' | 'warning';
  environment: string | null;
  /** a failure (`occurred`) or the end of the incident (`recovered`) */
  change: 'occurred' | 'recovered';
  /** names the failure or the recovery: one counted or sent once, however often it is delivered */
  id: string;
  at: number;
  /** the notification this change raises (an incident opening or ending); null: only counted */
  trigger: { event: Trigger; [field: string]: unknown } | null;
}

const REASONS = { error: 'the job reported an error', missed: 'no check-in by the expected time', timeout: 'the run went past its maximum runtime' } as const;

/** A monitor's issue: one per monitor and environment. */
export const monitorFingerprint = (slug: string, environment: string) => `monitor:${slug}:${environment}`;

/** What a monitor's effect (src/domain/monitor-state.ts) does to its issue. */
export function monitorIncident(monitor: { slug: string; name: string }, environment: string, effect: MonitorEffect): IncidentChange {
  const base = {
    kind: 'monitor' as const,
    fingerprint: monitorFingerprint(monitor.slug, environment),
    title: `Monitor failure: ${monitor.name}`,
    level: 'error' as const,
    environment,
    id: effect.id,
    at: effect.at,
  };
  const named = { monitor: monitor.slug, name: monitor.name, environment };
  if (effect.kind === 'recovered') {
    return { ...base, culprit: 'recovered', change: 'recovered', trigger: { event: 'monitor.recovered', ...named, since: new Date(effect.since).toISOString() } };
  }
  return {
    ...base,
    culprit: REASONS[effect.reason],
    change: 'occurred',
    trigger: effect.first ? { event: 'monitor.failed', ...named, reason: effect.reason, failures: effect.failures } : null,
  };
}
