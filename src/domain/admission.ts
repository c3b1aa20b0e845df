/**
 * Admission (issue 51): whether the API takes one more ingest request, decided from cheap signals before its body is
 * read, and how a refusal is said. Load (the group commit's queue and the age of its oldest item, the event loop's
 * delay, the job queue's depth) is answered 429, as every Sentry SDK expects of a server that wants less for a
 * while; a store that cannot take more (Redis near `maxmemory`, the data folder's disk under its floor) is answered
 * 503, which the installation's SDK retries, so sign-in attempts come back once it can.
 */

/** What the API measures of itself and its stores, sampled a few times a second. */
export interface AdmissionSignals {
  /** items waiting in the ingest group commits, and how long the oldest has waited (ms) */
  waiting: number;
  oldestWaitMs: number;
  /** the event loop's delay (ms, its mean over the last moment) */
  loopDelayMs: number;
  /** jobs waiting in the ingest queues */
  queueDepth: number;
  /** Redis' used memory over its `maxmemory` (0–1); null when it has no limit */
  redisMemory: number | null;
  /** free bytes on the data folder's disk; null when not known */
  diskFreeBytes: number | null;
}

export interface AdmissionLimits {
  maxWaiting: number;
  maxOldestWaitMs: number;
  maxLoopDelayMs: number;
  maxQueueDepth: number;
  /** share of `maxmemory` past which nothing more is written */
  maxRedisMemory: number;
  /** free bytes under which nothing more is written */
  diskFloorBytes: number;
  /** the share of its time (0–1) the API's thread may be busy before it takes fewer requests (1: no limit) */
  maxBusy: number;
  /** how long after it starts a process takes what comes whatever its busy share (it is compiling its code) */
  busyAfterMs: number;
}

export type AdmissionReason = 'ingest_backlog' | 'ingest_slow' | 'event_loop' | 'busy' | 'queue_depth' | 'redis_memory' | 'disk_floor';

export type Verdict = { admit: true } | { admit: false; status: 429 | 503; reason: AdmissionReason; retryAfter: number };

/** The first limit the signals pass, in the order that says most about why (a full store before a busy process). */
export function admission(s: AdmissionSignals, l: AdmissionLimits): Verdict {
  const refuse = (status: 429 | 503, reason: AdmissionReason, retryAfter: number): Verdict => ({ admit: false, status, reason, retryAfter });
  if (s.diskFreeBytes !== null && s.diskFreeBytes < l.diskFloorBytes) return refuse(503, 'disk_floor', 60);
  if (s.redisMemory !== null && s.redisMemory > l.maxRedisMemory) return refuse(503, 'redis_memory', 30);
  if (s.waiting > l.maxWaiting) return refuse(429, 'ingest_backlog', 1);
  if (s.oldestWaitMs > l.maxOldestWaitMs) return refuse(429, 'ingest_slow', 1);
  if (s.loopDelayMs > l.maxLoopDelayMs) return refuse(429, 'event_loop', 1);
  if (s.queueDepth > l.maxQueueDepth) return refuse(429, 'queue_depth', 5);
  return { admit: true };
}

/** The fewest ingest requests a second a busy API still takes. */
export const BUSY_FLOOR_PER_S = 50;
/** A thread busier than this has more to do than time: how much more, its busy share cannot tell. */
export const SATURATED = 0.95;

/** How many moments in a row a thread may stay saturated while the rate holds, before it is cut all the same. */
const BACKLOG_MOMENTS = 10;
/** How far under `maxBusy` a limited thread holds its rate rather than climbing (a band, so that it does not swing). */
const HOLD_BAND = 0.1;

/**
 * How many ingest requests a second the API takes next (null: as many as come), from the last moment (about a
 * twentieth of a second): the share of it its thread was busy, how many it took, how many it took a second while
 * no limit was in force (`usualPerS`), what one request it takes costs the thread (ms; learned while nothing is
 * refused), how many moments in a row it has been saturated, and the rate it never goes under (`floor`: what the
 * senders other than the largest ask, `calmFloor`).
 *
 * A saturated thread has more to do than time, and every moment it stays so adds to what waits behind it,
 * refusals included. It is given a third of the time it may be busy for the requests it takes (from their cost;
 * the rest is for refusing the others, which in a storm are ten times as many), but a first limit never less than
 * it usually takes (a stall that only looked like a storm refuses nothing). A rate already under that third holds
 * while the thread works through the backlog of refusals (taking fewer would gain little and would refuse calm
 * senders), for a few moments; then it is cut all the same (the learned cost may be wrong). Busy past `maxBusy` but
 * not saturated: nine tenths of what it took. Within a tenth under `maxBusy`: held. Further under it: up by the room
 * left, at most 5% and ten requests a second a moment (the thread shows what it took a moment late; a faster climb
 * overshoots into another saturated moment), until the limit is far above what comes and is lifted.
 */
export function nextAdmitRate(
  rate: number | null,
  moment: { busy: number; takenPerS: number; usualPerS: number; costMs: number; saturatedFor: number; floor: number },
  maxBusy: number,
): number | null {
  if (maxBusy >= 1) return null;
  const taken = Math.min(rate ?? Infinity, moment.takenPerS);
  const floor = Math.max(BUSY_FLOOR_PER_S, moment.floor);
  if (moment.busy > SATURATED) {
    const third = Math.max(floor, ((maxBusy / 3) * 1000) / moment.costMs);
    if (rate === null) return Math.max(floor, moment.usualPerS, Math.min(third, taken * 0.5));
    if (rate <= third && moment.saturatedFor < BACKLOG_MOMENTS) return rate;
    return Math.max(floor, Math.min(third, taken * 0.5, rate * 0.75));
  }
  if (moment.busy > maxBusy) return Math.max(floor, taken * 0.9);
  if (rate === null || moment.busy > maxBusy - HOLD_BAND) return rate;
  const up = rate * (1 + Math.min(0.05, maxBusy - HOLD_BAND - moment.busy)) + BUSY_FLOOR_PER_S / 5;
  return up > 4 * Math.max(moment.takenPerS, floor) ? null : up;
}

/**
 * Each sender's share of `rate` (requests a second), fair by max-min: a sender asking less than an equal share gets
 * what it asked and half as much again (its next moment may ask a little more), the rest is split equally among the
 * others. So while a busy API takes fewer requests, a project sending at its usual rate keeps being served and a
 * storming one gets what is left. `asked`: each sender's requests a second in the last moment.
 */
export function fairShares<S>(rate: number, asked: Map<S, number>): Map<S, number> {
  const shares = new Map<S, number>();
  const senders = wants(asked);
  let left = rate;
  senders.forEach(([sender, wants], i) => {
    const share = Math.min(wants, left / (senders.length - i));
    shares.set(sender, share);
    left -= share;
  });
  return shares;
}

/** What each sender wants of the next moment (what it asked and half as much again), the least first. */
function wants<S>(asked: Map<S, number>): (readonly [S, number])[] {
  return [...asked].map(([sender, n]) => [sender, n * 1.5 + 5] as const).sort((a, b) => a[1] - b[1]);
}

/**
 * The rate under which a busy API does not go (requests a second): enough that every sender but the largest gets
 * its fair share in full (`fairShares`), so a storm is shed from the project that sends it, not from the calm ones
 * beside it; at least `BUSY_FLOOR_PER_S`, at most `ceiling` (what the thread can take, so that a thousand calm
 * senders cannot hold it saturated either).
 */
export function calmFloor<S>(asked: Map<S, number>, ceiling: number): number {
  const senders = wants(asked);
  if (senders.length < 2) return BUSY_FLOOR_PER_S;
  const others = senders.slice(0, -1).reduce((sum, [, w]) => sum + w, 0);
  return Math.max(BUSY_FLOOR_PER_S, Math.min(ceiling, others + senders.at(-2)![1]));
}

/**
 * Sentry's rate-limit header for a refusal: `<seconds>:<categories>:<scope>:<reason>`, no categories meaning all (a
 * busy Lookout takes nothing for a moment), a project's quota naming its categories.
 */
export function sentryRateLimits(retryAfter: number, reason: string, categories: readonly string[] = [], scope: 'organization' | 'project' = 'organization'): string {
  return `${retryAfter}:${categories.join(';')}:${scope}:${reason}`;
}
