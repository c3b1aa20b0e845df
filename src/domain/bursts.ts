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
  /** how much the window weighs, kept as failures enter and leave it */
  measure: { enter(a: Attempt): void; leave(a: Attempt): void; clear(): void; value(): number },
  resetOnSuccess: boolean,
): Burst[] {
  const windowMs = settings.window_seconds * 1000;
  const cooldownMs = settings.cooldown_seconds * 1000;
  const steps = attempts.filter((a) => a.kind === 'login_failed' || (resetOnSuccess && a.kind === 'login_succeeded')).sort(byTimeThenId);
  const bursts: Burst[] = [];
  // The window is steps[head..tail), failures only: both ends only move forward, so a group's attempts
  // cost time in proportion to their number. Every failure the window held at a crossing is claimed, so
  // the claimed part of the window is a prefix of it, steps[head..claimedTo).
  let head = 0;
  let tail = 0;
  let claimedTo = 0;
  let open: Burst | null = null;

  for (let i = 0; i < steps.length; i++) {
    const attempt = steps[i]!;
    if (attempt.kind === 'login_succeeded') {
      head = tail = i + 1;
      measure.clear();
      continue;
    }
    tail = i + 1;
    measure.enter(attempt);
    while (head < tail && steps[head]!.at <= attempt.at - windowMs) measure.leave(steps[head++]!);
    if (measure.value() < settings.threshold) continue;

    if (!open || attempt.at >= open.raised_at + cooldownMs) {
      open = { key: steps[head]!.id, raised_at: attempt.at, first_seen: Infinity, last_seen: -Infinity, attempt_ids: [] };
      bursts.push(open);
    }
    for (let j = Math.max(head, claimedTo); j < tail; j++) {
      const member = steps[j]!;
      open.attempt_ids.push(member.id);
      open.first_seen = Math.min(open.first_seen, member.at);
      open.last_seen = Math.max(open.last_seen, member.at);
    }
    claimedTo = tail;
  }
  // A burst whose raising window was wholly claimed by the previous issue adds nothing.
  return bursts.filter((b) => b.attempt_ids.length > 0);
}

/** Failures of one (actor, ip) group. */
export function detectBruteForce(attempts: readonly Attempt[], settings: BurstSettings): Burst[] {
  let size = 0;
  const count = { enter: () => size++, leave: () => size--, clear: () => (size = 0), value: () => size };
  return detect(attempts, settings, count, true);
}

/** Failures from one ip across actors. */
export function detectStuffing(attempts: readonly Attempt[], settings: BurstSettings): Burst[] {
  const failuresOf = new Map<string, number>();
  const actors = {
    enter: (a: Attempt) => failuresOf.set(a.actor, (failuresOf.get(a.actor) ?? 0) + 1),
    leave: (a: Attempt) => (failuresOf.get(a.actor) === 1 ? failuresOf.delete(a.actor) : failuresOf.set(a.actor, failuresOf.get(a.actor)! - 1)),
    clear: () => failuresOf.clear(),
    value: () => failuresOf.size,
  };
  return detect(attempts, { ...settings, threshold: settings.stuffing_threshold }, actors, false);
}
