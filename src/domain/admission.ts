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
}

export type AdmissionReason = 'ingest_backlog' | 'ingest_slow' | 'event_loop' | 'queue_depth' | 'redis_memory' | 'disk_floor';

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

/**
 * Sentry's rate-limit header for a refusal: `<seconds>:<categories>:<scope>:<reason>`, no categories meaning all (a
 * busy Lookout takes nothing for a moment), a project's quota naming its categories.
 */
export function sentryRateLimits(retryAfter: number, reason: string, categories: readonly string[] = [], scope: 'organization' | 'project' = 'organization'): string {
  return `${retryAfter}:${categories.join(';')}:${scope}:${reason}`;
}
