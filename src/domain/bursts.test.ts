import { describe, expect, it } from 'vitest';
import { byTimeThenId, detectBruteForce, detectStuffing, resume, resumeSettled, type Attempt, type Burst, type BurstSettings, type Detector, type DetectorState } from './bursts.ts';

const S: BurstSettings = { threshold: 5, window_seconds: 600, cooldown_seconds: 1800, stuffing_threshold: 3 };
const min = 60_000;
let seq = 0;
const fail = (atMin: number, actor = 'alice'): Attempt => ({ id: `a${String(seq++).padStart(4, '0')}`, at: atMin * min, kind: 'login_failed', actor });
const ok = (atMin: number, actor = 'alice'): Attempt => ({ id: `a${String(seq++).padStart(4, '0')}`, at: atMin * min, kind: 'login_succeeded', actor });
const other = (atMin: number): Attempt => ({ id: `a${String(seq++).padStart(4, '0')}`, at: atMin * min, kind: 'password_reset_requested', actor: 'alice' });

describe('detectBruteForce', () => {
  it('raises nothing below the threshold', () => {
    expect(detectBruteForce([fail(0), fail(1), fail(2), fail(3)], S)).toEqual([]);
  });

  it('raises one issue at exactly the threshold, with every attempt of the window', () => {
    const attempts = [fail(0), fail(1), fail(2), fail(3), fail(4)];
    const [burst, ...rest] = detectBruteForce(attempts, S);
    expect(rest).toEqual([]);
    expect(burst).toMatchObject({ key: attempts[0]!.id, raised_at: 4 * min, first_seen: 0, last_seen: 4 * min });
    expect(burst!.attempt_ids).toHaveLength(5);
  });

  it('counts only failures inside the sliding window', () => {
    // 4 failures, then one more 10 minutes after the first: the first has left the window
    expect(detectBruteForce([fail(0), fail(1), fail(2), fail(3), fail(10)], S)).toEqual([]);
    // the window is (t - 10 min, t]: a failure at exactly t - 10 min is outside
    expect(detectBruteForce([fail(0), fail(10), fail(10), fail(10), fail(10)], S)).toEqual([]);
    expect(detectBruteForce([fail(0.1), fail(10), fail(10), fail(10), fail(10)], S)).toHaveLength(1);
  });

  it('a success resets the count', () => {
    expect(detectBruteForce([fail(0), fail(1), fail(2), fail(3), ok(3.5), fail(4)], S)).toEqual([]);
    expect(detectBruteForce([fail(0), fail(1), ok(1.5), fail(2), fail(3), fail(4), fail(5), fail(6)], S)).toHaveLength(1);
  });

  it('other kinds do not count and do not reset', () => {
    expect(detectBruteForce([fail(0), other(0.5), fail(1), fail(2), other(2.5), fail(3)], S)).toEqual([]);
    expect(detectBruteForce([fail(0), fail(1), other(1.5), fail(2), fail(3), fail(4)], S)).toHaveLength(1);
  });

  it('during the quiet period further failures and bursts update the open issue', () => {
    const first = [fail(0), fail(1), fail(2), fail(3), fail(4)];
    const more = [fail(5), fail(6)];
    const afterReset = [ok(7), fail(8), fail(9), fail(10), fail(11), fail(12)];
    const bursts = detectBruteForce([...first, ...more, ...afterReset], S);
    expect(bursts).toHaveLength(1);
    expect(bursts[0]!.attempt_ids).toHaveLength(12);
    expect(bursts[0]!.last_seen).toBe(12 * min);
  });

  it('after the quiet period a new burst raises a new issue', () => {
    const first = [fail(0), fail(1), fail(2), fail(3), fail(4)];
    const later = [fail(40), fail(41), fail(42), fail(43), fail(44)];
    const bursts = detectBruteForce([...first, ...later], S);
    expect(bursts.map((b) => b.attempt_ids.length)).toEqual([5, 5]);
    expect(bursts[1]!.key).toBe(later[0]!.id);
  });

  it('a failure just before the end of the quiet period still joins the open issue', () => {
    const first = [fail(0), fail(1), fail(2), fail(3), fail(4)];
    const edge = [fail(33), fail(33.5), fail(33.6), fail(33.7), fail(33.9)]; // raised at 4, quiet until 34
    expect(detectBruteForce([...first, ...edge], S)).toHaveLength(1);
    const past = [fail(34), fail(34), fail(34), fail(34), fail(34)];
    expect(detectBruteForce([...first, ...past], S)).toHaveLength(2);
  });

  it('gives the same bursts whatever the order the attempts arrive in', () => {
    const attempts = [fail(0), fail(1), ok(1.5), fail(2), fail(3), fail(3), fail(4), fail(5), fail(50), fail(51), fail(52), fail(53), fail(54)];
    const expected = detectBruteForce(attempts, S);
    for (let i = 0; i < 20; i++) {
      const shuffled = [...attempts].sort(() => Math.random() - 0.5);
      expect(detectBruteForce(shuffled, S)).toEqual(expected);
    }
  });

  it('honours other settings', () => {
    const strict = { ...S, threshold: 2, window_seconds: 60, cooldown_seconds: 60 };
    expect(detectBruteForce([fail(0), fail(0.5), fail(5), fail(5.5)], strict)).toHaveLength(2);
  });
});

describe('detectStuffing', () => {
  it('raises when one address fails on enough distinct actors in the window', () => {
    expect(detectStuffing([fail(0, 'a'), fail(1, 'b'), fail(2, 'a')], S)).toEqual([]);
    const bursts = detectStuffing([fail(0, 'a'), fail(1, 'b'), fail(2, 'a'), fail(3, 'c')], S);
    expect(bursts).toHaveLength(1);
    expect(bursts[0]!.attempt_ids).toHaveLength(4);
  });

  it('is not reset by a success of one actor', () => {
    expect(detectStuffing([fail(0, 'a'), fail(1, 'b'), ok(1.5, 'a'), fail(2, 'c')], S)).toHaveLength(1);
  });

  it('forgets actors that left the window', () => {
    expect(detectStuffing([fail(0, 'a'), fail(5, 'b'), fail(11, 'c')], S)).toEqual([]);
  });
});

/**
 * The detectors as first written, a replay that refilters the window at every failure: slow on long
 * histories (the window is scanned at each step) but plain to check against the rules above. The
 * detectors must give exactly what it gives.
 */
function replay(attempts: readonly Attempt[], settings: BurstSettings, stuffing: boolean): Burst[] {
  const windowMs = settings.window_seconds * 1000;
  const threshold = stuffing ? settings.stuffing_threshold : settings.threshold;
  const bursts: Burst[] = [];
  const claimed = new Set<string>();
  let window: Attempt[] = [];
  let open: Burst | null = null;
  for (const attempt of [...attempts].sort(byTimeThenId)) {
    if (attempt.kind === 'login_succeeded' && !stuffing) {
      window = [];
      continue;
    }
    if (attempt.kind !== 'login_failed') continue;
    window.push(attempt);
    window = window.filter((w) => w.at > attempt.at - windowMs);
    const measure = stuffing ? new Set(window.map((a) => a.actor)).size : window.length;
    if (measure < threshold) continue;
    if (!open || attempt.at >= open.raised_at + settings.cooldown_seconds * 1000) {
      open = { key: window[0]!.id, raised_at: attempt.at, first_seen: Infinity, last_seen: -Infinity, count: 0, latest: { at: 0, id: '' }, attempt_ids: [] };
      bursts.push(open);
    }
    for (const member of window) {
      if (claimed.has(member.id)) continue;
      claimed.add(member.id);
      open.attempt_ids.push(member.id);
      open.count++;
      open.latest = { at: member.at, id: member.id };
      open.first_seen = Math.min(open.first_seen, member.at);
      open.last_seen = Math.max(open.last_seen, member.at);
    }
  }
  return bursts.filter((b) => b.attempt_ids.length > 0);
}

/** A seeded generator (mulberry32), so a failing stream can be run again. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random stream of up to 300 attempts and settings to detect it with. */
function randomStream(rand: () => number): { settings: BurstSettings; attempts: Attempt[] } {
  const kinds = ['login_failed', 'login_failed', 'login_failed', 'login_succeeded', 'password_reset_requested'];
  const settings: BurstSettings = {
    threshold: 1 + Math.floor(rand() * 6),
    window_seconds: 30 + Math.floor(rand() * 600),
    cooldown_seconds: Math.floor(rand() * 1800),
    stuffing_threshold: 1 + Math.floor(rand() * 5),
  };
  const attempts: Attempt[] = [];
  let at = 0;
  for (let i = 0, n = Math.floor(rand() * 300); i < n; i++) {
    at += Math.floor(rand() * 60) * 1000; // several at one time, now and then
    attempts.push({ id: `e${Math.floor(rand() * 1e9).toString(16)}`, at, kind: kinds[Math.floor(rand() * kinds.length)]!, actor: `u${Math.floor(rand() * 8)}` });
  }
  return { settings, attempts };
}

describe('the detectors against the plain replay', () => {
  it('gives the same bursts on random streams of attempts', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const { settings, attempts } = randomStream(random(seed));
      expect(detectBruteForce(attempts, settings), `brute force, seed ${seed}`).toEqual(replay(attempts, settings, false));
      expect(detectStuffing(attempts, settings), `stuffing, seed ${seed}`).toEqual(replay(attempts, settings, true));
    }
  });
});

describe('resume', () => {
  /**
   * Folds the stream in `cuts` steps, each given what the store hands a worker: the attempts after the
   * state, and the window's failures at most a window older than the newest of them. A fold that asks
   * for a full read is run from the start on everything so far, as the worker does.
   */
  function inSteps(detector: Detector, settings: BurstSettings, attempts: Attempt[], cuts: number[], settleMs = 0) {
    const sorted = [...attempts].sort(byTimeThenId);
    const bursts = new Map<string, Omit<Burst, 'attempt_ids'>>();
    let state: DetectorState | null = null;
    let fullFolds = 0;
    for (const end of cuts) {
      const seen = sorted.slice(0, end);
      const last = state?.last ?? null;
      const fresh = seen.filter((a) => !last || a.at >= last.at);
      const newest = Math.max(...fresh.map((a) => a.at));
      const from = state?.after?.at ?? 0;
      const leaving = seen.filter((a) => a.at >= from && a.at <= Math.min(newest - settings.window_seconds * 1000, last?.at ?? -Infinity));
      let folded = resumeSettled(detector, settings, state, leaving, fresh, newest - settleMs);
      if (!folded) {
        fullFolds++;
        folded = resumeSettled(detector, settings, null, [], seen, newest - settleMs)!;
      }
      for (const { attempt_ids: _, ...b } of folded.bursts) bursts.set(`${b.key}@${b.raised_at}`, b);
      state = JSON.parse(JSON.stringify(folded.state)) as DetectorState;
    }
    return { bursts: [...bursts.values()], fullFolds };
  }

  it('folded in steps gives what one fold from the start gives, on random streams', () => {
    let folds = 0;
    let fullFolds = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const rand = random(seed);
      const { settings, attempts } = randomStream(rand);
      if (attempts.length === 0) continue;
      const cuts = [...new Set([...Array.from({ length: 1 + Math.floor(rand() * 8) }, () => 1 + Math.floor(rand() * attempts.length)), attempts.length])].sort((a, b) => a - b);
      for (const [detector, detect] of [['brute_force', detectBruteForce], ['credential_stuffing', detectStuffing]] as const) {
        const whole = detect(attempts, settings).map(({ attempt_ids: _, ...b }) => b);
        const byKey = (list: typeof whole) => new Map(list.map((b) => [`${b.key}@${b.raised_at}`, b]));
        // saved up to the newest attempt, or only up to a minute or two before it
        for (const settleMs of [0, Math.floor(rand() * 120) * 1000]) {
          const stepped = inSteps(detector, settings, attempts, cuts, settleMs);
          expect(byKey(stepped.bursts), `${detector}, seed ${seed}, settled ${settleMs} ms before`).toEqual(byKey(whole));
          folds += cuts.length;
          fullFolds += stepped.fullFolds;
        }
      }
    }
    // Folding again from the start is the exception (a burst raised in a window that was not read).
    expect(fullFolds).toBeLessThan(folds / 5);
  });

  it('reads only the oldest failures of the window as they leave, during a long attack', () => {
    const minute = 60_000;
    const attempts = Array.from({ length: 600 }, (_, i) => ({ id: `x${String(i).padStart(4, '0')}`, at: i * minute, kind: 'login_failed', actor: 'alice' }));
    const first = resume('brute_force', S, null, [], attempts.slice(0, 300))!;
    // one more failure a minute later: only the failure ten minutes before it can leave
    const leaving = attempts.slice(0, 301).filter((a) => a.at <= attempts[300]!.at - S.window_seconds * 1000 && a.at >= first.state.after!.at);
    expect(leaving).toHaveLength(2);
    const next = resume('brute_force', S, first.state, leaving, [attempts[300]!])!;
    expect(next.bursts.map((b) => b.attempt_ids)).toEqual([['x0300']]);
    expect(next.state.size).toBe(10);
  });

  it('skips attempts it folded in before', () => {
    const attempts = [fail(0), fail(1), fail(2), fail(3), fail(4)];
    const once = resume('brute_force', S, null, [], attempts)!;
    const again = resume('brute_force', S, once.state, [], attempts)!;
    expect(again.bursts).toEqual([]);
    expect(again.state).toEqual(once.state);
  });
});
