/**
 * Sign-in burst detection, recomputed from the stored attempts of a group so
 * that the same attempts always give the same issues and counts, whatever
 * order workers see them in.
 *
 * Brute force, per (actor, ip): `threshold` login_failed attempts inside a
 * sliding `window` raise an issue; a login_succeeded for the group empties
 * the window. Credential stuffing, per ip: failures on `stuffing_threshold`
 * distinct actors inside the window. After an issue is raised, any crossing
 * during its quiet period (`cooldown` from the raise) adds the attempts of
 * the crossing window to that issue instead of raising a new one. Each
 * attempt belongs to at most one issue of a detector.
 */

export interface Attempt {
  id: string;
  /** epoch milliseconds */
  at: number;
  kind: string;
  actor: string;
}

export interface BurstSettings {
  threshold: number;
  window_seconds: number;
  cooldown_seconds: number;
  stuffing_threshold: number;
}

export interface Burst {
  /** id of the earliest attempt of the raising window: the stable identity */
  key: string;
  raised_at: number;
  first_seen: number;
  last_seen: number;
  attempt_ids: string[];
}

export function byTimeThenId(a: Attempt, b: Attempt): number {
  return a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function detect(
  attempts: readonly Attempt[],
  settings: { threshold: number; window_seconds: number; cooldown_seconds: number },
  measure: (window: readonly Attempt[]) => number,
  resetOnSuccess: boolean,
): Burst[] {
  const windowMs = settings.window_seconds * 1000;
  const cooldownMs = settings.cooldown_seconds * 1000;
  const sorted = [...attempts].sort(byTimeThenId);
  const bursts: Burst[] = [];
  const claimed = new Set<string>();
  let window: Attempt[] = [];
  let open: Burst | null = null;

  for (const attempt of sorted) {
    if (attempt.kind === 'login_succeeded' && resetOnSuccess) {
      window = [];
      continue;
    }
    if (attempt.kind !== 'login_failed') continue;
    window.push(attempt);
    window = window.filter((w) => w.at > attempt.at - windowMs);
    if (measure(window) < settings.threshold) continue;

    if (!open || attempt.at >= open.raised_at + cooldownMs) {
      open = { key: window[0]!.id, raised_at: attempt.at, first_seen: Infinity, last_seen: -Infinity, attempt_ids: [] };
      bursts.push(open);
    }
    for (const member of window) {
      if (claimed.has(member.id)) continue;
      claimed.add(member.id);
      open.attempt_ids.push(member.id);
      open.first_seen = Math.min(open.first_seen, member.at);
      open.last_seen = Math.max(open.last_seen, member.at);
    }
  }
  // A burst whose raising window was wholly claimed by the previous issue adds nothing.
  return bursts.filter((b) => b.attempt_ids.length > 0);
}

/** Failures of one (actor, ip) group. */
export function detectBruteForce(attempts: readonly Attempt[], settings: BurstSettings): Burst[] {
  return detect(attempts, settings, (window) => window.length, true);
}

/** Failures from one ip across actors. */
export function detectStuffing(attempts: readonly Attempt[], settings: BurstSettings): Burst[] {
  return detect(
    attempts,
    { ...settings, threshold: settings.stuffing_threshold },
    (window) => new Set(window.map((a) => a.actor)).size,
    false,
  );
}
