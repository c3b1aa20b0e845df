/**
 * Admission (issues 51, 66): whether the API takes one more ingest request, decided from cheap signals before its
 * body is read, and how a refusal is said. Lookout refuses what it cannot absorb, never a busy moment:
 * - a store that cannot take more (the data folder's disk under its floor, Redis near `maxmemory`): 503, which the
 *   installation's SDK retries, so sign-in attempts come back once it can;
 * - a buffer that is full: more ingest requests taken and not yet answered than `bufferItems` or `bufferSeconds`
 *   of what it answers, whichever is larger (a burst shorter than that is always taken whole), a store that has not
 *   taken an item for `maxStallMs`, or more jobs waiting for a worker than `maxQueueDepth`: 429;
 * - a standing queue: what was taken has waited over `targetDelayMs` (for its turn of the thread, or to be written)
 *   for a whole `intervalMs` (CoDel's rule: a burst drains within the interval, a storm does not). While that holds,
 *   the queue is kept at about `targetDelayMs` of work by refusing (429 `queue_delay`) the senders that send the
 *   most, so a storm is shed from the project sending it and calm projects beside it are served.
 */

/** What the API measures of itself and its stores: its requests in flight live, the rest sampled. */
export interface AdmissionSignals {
  /** ingest requests taken and not yet answered */
  inFlight: number;
  /** ingest requests answered a second, lately */
  answeredPerS: number;
  /** how long the oldest item waiting for the store's next write has waited (ms) */
  oldestWriteWaitMs: number;
  /** jobs waiting in the ingest queues */
  queueDepth: number;
  /** Redis' used memory over its `maxmemory` (0–1); null when it has no limit */
  redisMemory: number | null;
  /** free bytes on the data folder's disk; null when not known */
  diskFreeBytes: number | null;
}

export interface AdmissionLimits {
  /** ingest requests in flight always taken (a burst this large is never refused) */
  bufferItems: number;
  /** ... or this many seconds of what the API answers, when that is more */
  bufferSeconds: number;
  /** a store that has not taken an item for this long takes nothing more (ms) */
  maxStallMs: number;
  /** the delay (ms) over which, held for `intervalMs`, a queue is standing and is shed down to it */
  targetDelayMs: number;
  intervalMs: number;
  maxQueueDepth: number;
  /** share of `maxmemory` past which nothing more is written */
  maxRedisMemory: number;
  /** free bytes under which nothing more is written */
  diskFloorBytes: number;
}

export type AdmissionReason = 'ingest_backlog' | 'ingest_slow' | 'queue_delay' | 'queue_depth' | 'redis_memory' | 'disk_floor';

export type Verdict = { admit: true } | { admit: false; status: 429 | 503; reason: AdmissionReason; retryAfter: number };

/**
 * A sender (a project, or a key not yet resolved) as admission sees it: what it has in flight, among how many
 * senders; the requests a second it sends lately, beside the largest sender's.
 */
export interface SenderLoad {
  inFlight: number;
  senders: number;
  sendsPerS: number;
  largestPerS: number;
}

/** A sender may always hold this many requests in flight (an SDK sends a few together). */
export const SENDER_BURST = 8;
/** A buffer that is full is shared: a sender under its equal share is still taken, up to this many times the bound. */
const SHARED_OVER = 2;

/** How many requests the buffer holds now: `bufferItems`, or `bufferSeconds` of what is answered when more. */
export function bufferBound(answeredPerS: number, l: AdmissionLimits): number {
  return Math.max(l.bufferItems, answeredPerS * l.bufferSeconds);
}

/** Whether a sender holds more than it may of `total`: past a few, and at least an equal share. */
function holdsMore(sender: SenderLoad, total: number): boolean {
  return sender.inFlight >= Math.max(SENDER_BURST, total / Math.max(1, sender.senders));
}

/**
 * The first limit one more request from `sender` would pass, in the order that says most about why (a full store
 * before a full buffer before a standing queue). `shedding`: a standing queue is being shed (`nextShedding`).
 */
export function admission(s: AdmissionSignals, sender: SenderLoad, shedding: boolean, l: AdmissionLimits): Verdict {
  const refuse = (status: 429 | 503, reason: AdmissionReason, retryAfter: number): Verdict => ({ admit: false, status, reason, retryAfter });
  if (s.diskFreeBytes !== null && s.diskFreeBytes < l.diskFloorBytes) return refuse(503, 'disk_floor', 60);
  if (s.redisMemory !== null && s.redisMemory > l.maxRedisMemory) return refuse(503, 'redis_memory', 30);
  if (s.oldestWriteWaitMs > l.maxStallMs) return refuse(429, 'ingest_slow', 1);
  if (s.queueDepth > l.maxQueueDepth) return refuse(429, 'queue_depth', 5);
  const bound = bufferBound(s.answeredPerS, l);
  if (s.inFlight >= bound && (holdsMore(sender, s.inFlight) || s.inFlight >= SHARED_OVER * bound)) return refuse(429, 'ingest_backlog', 1);
  // shed down to the target (the queue holds about targetDelayMs of what is answered), from the senders that send
  // the most: one sending under half what the largest sends is a calm project beside a storm, and is served
  if (shedding && s.inFlight >= (s.answeredPerS * l.targetDelayMs) / 1000 && sender.inFlight >= SENDER_BURST && sender.sendsPerS >= sender.largestPerS / 2)
    return refuse(429, 'queue_delay', 1);
  return { admit: true };
}

/**
 * CoDel's state: since when the delay has been over the target (null: it is not), how many requests arrived since
 * then, whether the queue is being shed, since when a queue being shed has been under half the target (null: it is
 * not), and when it last was shed (null: never).
 */
export interface Shedding {
  overSince: number | null;
  arrivedOver: number;
  shedding: boolean;
  underSince: number | null;
  lastShedAt: number | null;
}
export const CALM: Shedding = { overSince: null, arrivedOver: 0, shedding: false, underSince: null, lastShedAt: null };

/** For this many intervals after it last shed, a queue standing again is a storm still on (CoDel's memory). */
const RECENT_INTERVALS = 16;

/**
 * The next state from one sample at `now` (ms): the queue's delay (ms; the longest any item taken has waited, for
 * the thread or for the store), the requests that arrived since the last sample and those in flight now.
 *
 * Shedding starts once the delay has stayed over the target for a whole interval while more requests arrived than
 * the buffer holds (a burst the buffer holds is never shed, however slowly it drains: a fresh store's first writes
 * are slow), or, within RECENT_INTERVALS of the last shedding, whatever arrived (the storm that was shed is still
 * on). It ends once the delay has stayed under half the target for a whole interval (shedding holds the queue near
 * the target, so a lower delay held that long means the senders sent less), or at once when nothing is in flight.
 * Ending at the first low sample let the buffer's worth of the storm in at once, seconds of queue that then had to
 * be shed whole: bench:storm swung between taking twice its capacity and refusing the storming project outright.
 */
export function nextShedding(
  state: Shedding,
  sample: { delayMs: number; arrived: number; inFlight: number },
  now: number,
  l: Pick<AdmissionLimits, 'targetDelayMs' | 'intervalMs' | 'bufferItems'>,
): Shedding {
  const lastShedAt = state.shedding ? now : state.lastShedAt;
  if (state.shedding) {
    if (sample.inFlight === 0) return { ...CALM, lastShedAt };
    if (sample.delayMs > l.targetDelayMs) return { ...state, overSince: state.overSince ?? now, arrivedOver: state.arrivedOver + sample.arrived, underSince: null, lastShedAt };
    const underSince = sample.delayMs <= l.targetDelayMs / 2 ? (state.underSince ?? now) : null;
    if (underSince !== null && now - underSince >= l.intervalMs) return { ...CALM, lastShedAt };
    return { ...CALM, shedding: true, underSince, lastShedAt };
  }
  if (sample.delayMs <= l.targetDelayMs) return { ...CALM, lastShedAt };
  const overSince = state.overSince ?? now;
  const arrivedOver = state.arrivedOver + sample.arrived;
  const recent = lastShedAt !== null && now - lastShedAt < RECENT_INTERVALS * l.intervalMs;
  const shedding = now - overSince >= l.intervalMs && (arrivedOver > l.bufferItems || recent);
  return { overSince, arrivedOver, shedding, underSince: null, lastShedAt: shedding ? now : lastShedAt };
}

/**
 * Sentry's rate-limit header for a refusal: `<seconds>:<categories>:<scope>:<reason>`, no categories meaning all (a
 * busy Lookout takes nothing for a moment), a project's quota naming its categories.
 */
export function sentryRateLimits(retryAfter: number, reason: string, categories: readonly string[] = [], scope: 'organization' | 'project' = 'organization'): string {
  return `${retryAfter}:${categories.join(';')}:${scope}:${reason}`;
}
