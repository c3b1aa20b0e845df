/**
 * The metrics each process records (prom-client, one registry per process).
 * API and worker processes publish them to Redis (src/metrics/fleet.ts), so
 * `GET /metrics` on any API process shows the whole fleet, each series
 * labelled with the `process` that recorded it.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Latency buckets, in seconds: from well under the 50 ms target to the 10 s a stuck store takes. */
const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export type IngestKind = 'session' | 'event';

/** The Sentry envelope item types in use today (../shared/reference/real-clients.md), and the store and CSP bodies. */
export const ITEM_TYPES: ReadonlySet<string> = new Set([
  'event', 'transaction', 'session', 'sessions', 'attachment', 'user_report', 'feedback', 'client_report', 'check_in',
  'profile', 'profile_chunk', 'replay_event', 'replay_recording', 'replay_video', 'span', 'log', 'otel_log', 'statsd',
  'metric_buckets', 'security', 'envelope',
]);
/**
 * Why an item was dropped: Lookout's reasons, and the reasons Sentry's SDKs give in their client reports
 * (`client_<reason>`).
 */
export const DROP_REASONS: ReadonlySet<string> = new Set([
  'not_kept', 'invalid', 'too_large', 'too_many_attachments', 'filtered', 'rate_limited', 'duplicate', 'security_monitoring_disabled', 'too_many_kinds',
  'client_gone', 'ingest_backlog', 'ingest_slow', 'queue_delay', 'event_loop', 'busy', 'queue_depth', 'redis_memory', 'disk_floor', 'quota_minute', 'quota_hour', 'quota_month', 'spike',
  ...['browser_extensions', 'localhost', 'legacy_browsers', 'release', 'error_message'].map((f) => `filtered_${f}`),
  ...['queue_overflow', 'cache_overflow', 'ratelimit_backoff', 'network_error', 'sample_rate', 'before_send', 'event_processor',
    'send_error', 'internal_sdk_error', 'insufficient_data', 'backpressure', 'buffer_overflow'].map((r) => `client_${r}`),
]);
export type IngestOutcome = 'accepted' | 'rejected' | 'duplicated';

export function makeMetrics() {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  const metrics = {
    registry,
    httpDuration: new Histogram({
      name: 'lookout_http_request_duration_seconds',
      help: 'HTTP request durations by method, route (the route pattern, not the path) and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: SECONDS,
      registers,
    }),
    ingested: new Counter({
      name: 'lookout_ingested_total',
      help: 'Sessions and events by outcome: accepted (stored), rejected (refused or skipped entries), duplicated (already stored; changed nothing)',
      labelNames: ['kind', 'outcome'] as const,
      registers,
    }),
    ingestDropped: new Counter({
      name: 'lookout_ingest_dropped_total',
      help: 'Items received but not stored, by item type (Sentry envelope item types; other for names Lookout does not know) and reason',
      labelNames: ['type', 'reason'] as const,
      registers,
    }),
    rateLimited: new Counter({
      name: 'lookout_rate_limited_total',
      help: 'Requests refused with 429 by the per-key rate limit',
      labelNames: ['route'] as const,
      registers,
    }),
    refused: new Counter({
      name: 'lookout_ingest_refused_total',
      help: "Ingest requests refused before anything was written, by route and reason: load (ingest_backlog, ingest_slow, queue_delay, queue_depth), a full store (redis_memory, disk_floor), a project's quota (quota_minute, quota_hour, quota_month) or spike protection (spike)",
      labelNames: ['route', 'reason'] as const,
      registers,
    }),
    admissionDelay: new Gauge({
      name: 'lookout_admission_delay_seconds',
      help: "The longest any ingest request this API process took has waited for its turn of the thread or for the store's next write",
      registers,
    }),
    admissionShedding: new Gauge({
      name: 'lookout_admission_shedding',
      help: 'Whether this API process sheds a standing queue (1): its delay stayed over ADMIT_TARGET_DELAY_MS for ADMIT_INTERVAL_MS',
      registers,
    }),
    ingestInFlight: new Gauge({
      name: 'lookout_ingest_in_flight',
      help: 'Ingest requests this API process has taken and not yet answered',
      registers,
    }),
    jobDuration: new Histogram({
      name: 'lookout_job_duration_seconds',
      help: 'Job run times by queue, job name and outcome (completed or failed)',
      labelNames: ['queue', 'job', 'outcome'] as const,
      buckets: SECONDS,
      registers,
    }),
    jobFailures: new Counter({
      name: 'lookout_job_failures_total',
      help: 'Job attempts that threw (each is retried with backoff until its attempts run out)',
      labelNames: ['queue', 'job'] as const,
      registers,
    }),
    flushDuration: new Histogram({
      name: 'lookout_flush_duration_seconds',
      help: 'Run times of flusher passes (changed rollups and issues copied from Redis to MongoDB)',
      buckets: SECONDS,
      registers,
    }),
    flushedDocuments: new Counter({
      name: 'lookout_flushed_documents_total',
      help: 'Rollups and issues the flusher wrote to MongoDB',
      registers,
    }),
    workerRestarts: new Counter({
      name: 'lookout_worker_restarts_total',
      help: 'Worker processes `npm start` started again after they died',
      registers,
    }),
    sweeperRequeued: new Counter({
      name: 'lookout_sweeper_requeued_total',
      help: 'Stored entries the sweeper enqueued again because their job was missing (Redis was down or lost data)',
      labelNames: ['kind'] as const,
      registers,
    }),
    notifications: new Counter({
      name: 'lookout_notification_attempts_total',
      help: 'Notification delivery attempts, by trigger and outcome (delivered, retrying, failed, refused)',
      labelNames: ['event', 'outcome'] as const,
      registers,
    }),
    sourcemapEvents: new Histogram({
      name: 'lookout_sourcemap_event_seconds',
      help: "Time a worker took to map one event's JavaScript frames through source maps (finding, reading and parsing maps included)",
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    sourcemapFrames: new Counter({
      name: 'lookout_sourcemap_frames_total',
      help: 'JavaScript frames a worker mapped through source maps, or could not, by the reason (debug_id_not_found, url_not_found, not_covered, ...)',
      labelNames: ['result'] as const,
      registers,
    }),
    notificationDelay: new Histogram({
      name: 'lookout_notification_delay_seconds',
      help: 'From a trigger (or a digest closing) to its delivery',
      buckets: [0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600],
      registers,
    }),
  };
  return {
    ...metrics,
    /** Counts `n` sessions or events with one outcome (zero is not recorded). */
    ingest(kind: IngestKind, outcome: IngestOutcome, n = 1) {
      if (n > 0) metrics.ingested.inc({ kind, outcome }, n);
    },
    /** Counts `n` items dropped; a type or reason Lookout does not name is `other`, so the series stay few. */
    dropped(type: string, reason: string, n = 1) {
      const known = (name: string, names: ReadonlySet<string>) => (names.has(name) ? name : 'other');
      metrics.ingestDropped.inc({ type: known(type, ITEM_TYPES), reason: known(reason, DROP_REASONS) }, n);
    },
  };
}
export type Metrics = ReturnType<typeof makeMetrics>;
