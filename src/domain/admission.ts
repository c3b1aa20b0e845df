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
const SATURATED = 0.95;

/**
 * How many ingest requests a second the API takes next (null: as many as come), from the last moment: the share of
 * it its thread was busy and how many it took. Over `maxBusy`, three quarters of what it took, half when the thread
 * is saturated (the work behind an accepted event is most of a busy thread's time; a refusal costs a sixth of it,
 * and a storm's first moments queue behind the thread until the rate is down); well under it, a quarter more each
 * moment, until the limit is far above what comes and is lifted. A thread kept busy by refusals alone holds the
 * floor, and climbs back once they stop. (Busy time as an on/off switch refused everything from a storm's first
 * second on: refusals alone kept it busy.)
 */
export function nextAdmitRate(rate: number | null, moment: { busy: number; takenPerS: number }, maxBusy: number): number | null {
  if (maxBusy >= 1) return null;
  if (moment.busy > maxBusy) return Math.max(BUSY_FLOOR_PER_S, Math.min(rate ?? Infinity, moment.takenPerS) * (moment.busy > SATURATED ? 0.5 : 0.75));
  if (rate === null || moment.busy > maxBusy - 0.1) return rate;
  const up = rate * 1.25 + BUSY_FLOOR_PER_S;
  return up > 4 * Math.max(moment.takenPerS, BUSY_FLOOR_PER_S) ? null : up;
}

/**
 * Each sender's share of `rate` (requests a second), fair by max-min: a sender asking less than an equal share gets
 * what it asked and half as much again (its next moment may ask a little more), the rest is split equally among the
 * others. So while a busy API takes fewer requests, a project sending at its usual rate keeps being served and a
 * storming one gets what is left. `asked`: each sender's requests a second in the last moment.
 */
export function fairShares(rate: number, asked: Map<string, number>): Map<string, number> {
  const shares = new Map<string, number>();
  const senders = [...asked].map(([sender, n]) => [sender, n * 1.5 + 5] as const).sort((a, b) => a[1] - b[1]);
  let left = rate;
  senders.forEach(([sender, wants], i) => {
    const share = Math.min(wants, left / (senders.length - i));
    shares.set(sender, share);
    left -= share;
  });
  return shares;
}

/**
 * Sentry's rate-limit header for a refusal: `<seconds>:<categories>:<scope>:<reason>`, no categories meaning all (a
 * busy Lookout takes nothing for a moment), a project's quota naming its categories.
 */
export function sentryRateLimits(retryAfter: number, reason: string, categories: readonly string[] = [], scope: 'organization' | 'project' = 'organization'): string {
  return `${retryAfter}:${categories.join(';')}:${scope}:${reason}`;
}
