/**
 * Sign-in burst detection, a fold over a group's attempts in time order, so
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
 *
 * The fold stops at any attempt and goes on later from its state
 * (`resume`), reading only the attempts after it and the window's oldest
 * ones as they leave: a group under a long attack costs the same for each
 * new attempt, however many came before.
 */
import crypto from 'node:crypto';

export interface Attempt {
  id: string;
  /** epoch milliseconds */
  at: number;
  kind: string;
  actor: string;
  /** the address it came from, where the attempts read carry it (an IPv6 /64's); the fold does not read it */
  ip?: string;
}

export interface BurstSettings {
  threshold: number;
  window_seconds: number;
  cooldown_seconds: number;
  stuffing_threshold: number;
}

/** Where an attempt stands in the fold's order: by time, then by id. */
export interface Position {
  at: number;
  id: string;
}

export interface Burst {
  /** id of the earliest attempt of the raising window: the issue's stable identity */
  key: string;
  raised_at: number;
  first_seen: number;
  last_seen: number;
  /** attempts in the burst */
  count: number;
  /** its newest attempt */
  latest: Position;
  /** the attempts this fold added to it (all of them, for a fold from the start) */
  attempt_ids: string[];
}

export type Detector = 'brute_force' | 'credential_stuffing';

/** Where a fold stopped; JSON, kept between folds (src/state/issues.state.ts). */
export interface DetectorState {
  /** the settings it was folded with: a state folded with others is not resumed */
  settings: string;
  /** the newest attempt folded in */
  last: Position | null;
  /** the window holds the failures after this position (null: no failure folded in yet) */
  after: Position | null;
  /** failures in the window */
  size: number;
  /** credential stuffing: the window's failures per actor */
  actors: Record<string, number>;
  /** the window's newest `unclaimed` failures belong to no burst yet, */
  unclaimed: number;
  /** the first of them, when the fold knows it */
  first_unclaimed: Position | null;
  /** the newest failure a burst holds */
  claimed_to: Position | null;
  /** the burst a crossing before the end of its quiet period adds to */
  open: Omit<Burst, 'attempt_ids'> | null;
}

export function byTimeThenId(a: Position, b: Position): number {
  return a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

const isAfter = (a: Position, b: Position | null) => b === null || byTimeThenId(a, b) > 0;
const position = (a: Position): Position => ({ at: a.at, id: a.id });

const thresholdOf = (detector: Detector, settings: BurstSettings) => (detector === 'brute_force' ? settings.threshold : settings.stuffing_threshold);

export function settingsKey(detector: Detector, settings: BurstSettings): string {
  return `${detector}:${thresholdOf(detector, settings)}:${settings.window_seconds}:${settings.cooldown_seconds}`;
}

function emptyState(detector: Detector, settings: BurstSettings): DetectorState {
  return { settings: settingsKey(detector, settings), last: null, after: null, size: 0, actors: {}, unclaimed: 0, first_unclaimed: null, claimed_to: null, open: null };
}

/**
 * Goes on with the fold from `state` (null: from the start) over the
 * attempts after it (`fresh`; any not after `state.last` are left out),
 * given the failures of its window that are at most a window older than the
 * newest fresh attempt (`leaving`: only they can leave the window). Returns
 * the new state and the bursts raised or grown, or null when the fold needs
 * an attempt it was not given (a new burst whose first attempts were not
 * read): the caller then folds again from the start.
 */
export function resume(
  detector: Detector,
  settings: BurstSettings,
  state: DetectorState | null,
  leaving: readonly Attempt[],
  fresh: readonly Attempt[],
): { state: DetectorState; bursts: Burst[] } | null {
  const windowMs = settings.window_seconds * 1000;
  const cooldownMs = settings.cooldown_seconds * 1000;
  const threshold = thresholdOf(detector, settings);
  const s: DetectorState = state ? { ...state, actors: { ...state.actors }, open: state.open && { ...state.open } } : emptyState(detector, settings);
  const resets = detector === 'brute_force';
  const steps = fresh.filter((a) => isAfter(a, state?.last ?? null) && (a.kind === 'login_failed' || (resets && a.kind === 'login_succeeded'))).sort(byTimeThenId);
  // The window, oldest first: the leaving failures given, then `hidden` ones not read, then the fresh ones entered.
  const known = leaving.filter((a) => a.kind === 'login_failed' && isAfter(a, s.after) && !isAfter(a, s.last)).sort(byTimeThenId);
  let hidden = s.size - known.length;
  if (hidden < 0) return null;
  const entered: Attempt[] = [];
  let k = 0;
  let e = 0;
  const head = (): Attempt | null => (k < known.length ? known[k]! : hidden > 0 ? null : (entered[e] ?? null));
  let distinct = Object.keys(s.actors).length;
  const bursts: Burst[] = [];
  /** what this fold adds to the open burst */
  let current: Burst | null = null;

  for (const step of steps) {
    if (step.kind === 'login_succeeded') {
      k = known.length;
      hidden = 0;
      e = entered.length;
      Object.assign(s, { after: position(step), size: 0, actors: {}, unclaimed: 0, first_unclaimed: null });
      distinct = 0;
      continue;
    }
    entered.push(step);
    // the window's lower end, just before its first failure (no id sorts before '')
    if (!s.after) s.after = { at: step.at, id: '' };
    s.size++;
    if ((s.actors[step.actor] = (s.actors[step.actor] ?? 0) + 1) === 1) distinct++;
    if (s.unclaimed++ === 0) s.first_unclaimed = position(step);
    for (let oldest = head(); oldest && oldest.at <= step.at - windowMs; oldest = head()) {
      if (k < known.length) k++;
      else e++;
      s.size--;
      if (--s.actors[oldest.actor]! === 0) {
        delete s.actors[oldest.actor];
        distinct--;
      }
      s.after = position(oldest);
      // The unclaimed failures end the window: one leaving was its oldest, and the next one is the new head.
      if (isAfter(oldest, s.claimed_to) && --s.unclaimed > 0) {
        const next = head();
        s.first_unclaimed = next && position(next);
      }
    }
    if ((resets ? s.size : distinct) < threshold) continue;

    if (!s.open || step.at >= s.open.raised_at + cooldownMs) {
      const first = head();
      if (!first || !s.first_unclaimed) return null;
      s.open = { key: first.id, raised_at: step.at, first_seen: s.first_unclaimed.at, last_seen: step.at, count: 0, latest: position(step) };
      current = null;
    }
    const open = s.open;
    if (!current) bursts.push((current = { ...open, attempt_ids: [] }));
    // The window's unclaimed failures join the burst: the newest of them are the fresh ones entered.
    for (let j = Math.max(e, entered.length - s.unclaimed); j < entered.length; j++) current.attempt_ids.push(entered[j]!.id);
    open.count += s.unclaimed;
    open.last_seen = Math.max(open.last_seen, step.at);
    open.latest = position(step);
    Object.assign(current, open);
    s.unclaimed = 0;
    s.first_unclaimed = null;
    s.claimed_to = position(step);
  }
  const newest = fresh.filter((a) => isAfter(a, s.last)).reduce<Position | null>((m, a) => (isAfter(a, m) ? position(a) : m), null);
  if (newest) s.last = newest;
  return { state: s, bursts };
}

function detectAll(detector: Detector, attempts: readonly Attempt[], settings: BurstSettings): Burst[] {
  return resume(detector, settings, null, [], attempts)!.bursts;
}

/** Failures of one (actor, ip) group, folded from the start. */
export function detectBruteForce(attempts: readonly Attempt[], settings: BurstSettings): Burst[] {
  return detectAll('brute_force', attempts, settings);
}

/** Failures from one ip across actors, folded from the start. */
export function detectStuffing(attempts: readonly Attempt[], settings: BurstSettings): Burst[] {
  return detectAll('credential_stuffing', attempts, settings);
}

/**
 * `resume`, saving the fold only up to `settledAt`: the state returned holds
 * the attempts up to that time, the bursts hold every fresh attempt. An
 * attempt that arrives late (one no newer than what a saved fold holds)
 * makes the next fold start over, so the state keeps clear of the newest
 * attempts, which arrive in any order.
 */
export function resumeSettled(
  detector: Detector,
  settings: BurstSettings,
  state: DetectorState | null,
  leaving: readonly Attempt[],
  fresh: readonly Attempt[],
  settledAt: number,
): { state: DetectorState; bursts: Burst[] } | null {
  const settled = resume(detector, settings, state, leaving, fresh.filter((a) => a.at <= settledAt));
  if (!settled) return null;
  // The rest goes on from the settled fold. The failures of its window given are those given, then the settled
  // fresh ones where they follow on (the ones given reach the newest folded before).
  const bound = Math.max(...fresh.map((a) => a.at)) - settings.window_seconds * 1000;
  const followsOn = !state?.last || bound >= state.last.at;
  const rest = resume(detector, settings, settled.state, followsOn ? [...leaving, ...fresh.filter((a) => a.at <= settledAt)] : leaving, fresh);
  if (!rest) return null;
  const bursts = settled.bursts.map((b) => ({ ...b, attempt_ids: [...b.attempt_ids] }));
  for (const b of rest.bursts) {
    const last = bursts.at(-1);
    // the fold's open burst, carried from the settled part into the rest
    if (last && last.key === b.key && last.raised_at === b.raised_at) Object.assign(last, { ...b, attempt_ids: [...last.attempt_ids, ...b.attempt_ids] });
    else bursts.push(b);
  }
  return { state: settled.state, bursts };
}

/**
 * A burst's security issue: its group's digest (the detector's key hashed: an actor and address, or an address),
 * its fingerprint `security:<detector>:<digest>:<first attempt>` and its title, naming the attempts' own actor and
 * address (never text recovered from a key).
 */
export function burstIssue(detector: Detector, key: { key: string; actor: string | null; ip: string | null }, burst: Pick<Burst, 'key'>) {
  const digest = crypto.hash('sha256', key.key).slice(0, 16);
  const title =
    detector === 'brute_force'
      ? `Repeated failed sign-ins for ${key.actor} from ${key.ip ?? 'an unknown address'}`
      : `Failed sign-ins on many accounts from ${key.ip}`;
  return { digest, fingerprint: `security:${detector}:${digest}:${burst.key}`, title };
}
