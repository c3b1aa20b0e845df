/**
 * The one place that reads the environment. `loadConfig` validates every
 * variable and throws one ConfigError naming all bad ones, before any
 * connection is opened. The result is frozen and passed around as a parameter.
 */
import ipaddr from 'ipaddr.js';
import path from 'node:path';

export const QUEUE_NAMES = ['sessions', 'events', 'notifications', 'maintenance'] as const;
export type QueueKey = (typeof QUEUE_NAMES)[number];

export interface Config {
  readonly host: string;
  readonly port: number;
  /** null: start the embedded redis-server (unless `redisCluster` is set) */
  readonly redisUrl: string | null;
  /** REDIS_CLUSTER_NODES: startup nodes of a Redis Cluster; every Redis client is then a cluster client */
  readonly redisCluster: readonly { readonly host: string; readonly port: number }[] | null;
  /** null: start the embedded FerretDB */
  readonly mongoUrl: string | null;
  readonly mongoDb: string;
  readonly dataDir: string;
  readonly cacheDir: string;
  readonly embeddedRedisPort: number;
  readonly embeddedMongoPort: number;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly bodyLimitBytes: number;
  readonly queuePrefix: string;
  readonly concurrency: Readonly<Record<QueueKey, number>>;
  /** the CPU priority (nice, 0 to 19) a `lookout worker` process lowers itself to */
  readonly workerNice: number;
  readonly shutdownTimeoutMs: number;
  /** Seconds a resolved key stays cached in an API process. */
  readonly keyCacheSeconds: number;
  /** Requests per minute per key on the sessions endpoints (spec 8: 3,000), shared through Redis. */
  readonly sessionsRateLimit: number;
  /** Key of the `did` hashes; null: one generated at first start and kept in MongoDB. */
  readonly didHashKey: string | null;
  /** seals secrets Lookout reads back (TOTP seeds, OpenID client secrets); null: a key kept in the database */
  readonly encryptionKey: string | null;
  /** whether an OpenID issuer may be an inward (private, loopback) address, and plain http there */
  readonly ssoAllowPrivate: boolean;
  /** How long stored work may wait unqueued before the sweeper enqueues it. */
  readonly sweepGraceMs: number;
  /** scheduled backups (`BACKUP_EVERY_HOURS`, 0: none) into `dir`, the newest `keep` kept */
  readonly backups: { readonly everyMs: number; readonly dir: string; readonly keep: number };
  /** BullMQ job lock: a job of a worker that died is retried after about this long. */
  readonly jobLockMs: number;
  /** HTTP Basic credential of the queue dashboard; null (no ADMIN_PASSWORD): the dashboard is off. */
  readonly admin: { readonly username: string; readonly password: string } | null;
  /** How long after `started` a session's state is kept in Redis and updates of it are taken (Relay: 5 days). */
  readonly sessionUpdateWindowMs: number;
  /** How often the flusher copies changed rollups from Redis to MongoDB. */
  readonly flushIntervalMs: number;
  /** How often the workers check the performance.regressed rules (src/notify/perf-alerts.ts). */
  readonly perfAlertsEveryMs: number;
  /** Days error events and sign-in attempts are kept after they were received (a project's owner may set its own). */
  readonly eventRetentionDays: number;
  /** Dashboard session cookies carry `Secure` (Lookout is served over TLS, directly or behind a proxy). */
  readonly cookieSecure: boolean;
  /**
   * The reverse proxies (addresses and CIDR ranges) whose X-Forwarded-For and X-Forwarded-Proto are believed: the
   * client's address (sign-in throttle, logs, `{{auto}}`) and whether it came over TLS. Empty: none (the peer is
   * the client, and those headers are ignored).
   */
  readonly trustProxy: readonly string[];
  /** The dashboard's address as people reach it, for the links notifications carry (default: the API's own address). */
  readonly publicUrl: string;
  /** SMTP server of email notifications (smtp:// or smtps://, credentials in the URL); null: email channels are refused. */
  readonly smtpUrl: string | null;
  readonly mailFrom: string;
  /** Webhook targets on loopback, private or link-local addresses are allowed (a chat server on the LAN; tests). */
  readonly webhookAllowPrivate: boolean;
  /** whether an uptime probe may reach an inward (loopback, private, link-local) address */
  readonly probeAllowPrivate: boolean;
  /** Folder of the store's command trace (src/store/command-trace.ts), a diagnostic; null: not traced. */
  readonly storeTraceDir: string | null;
  /** When the API refuses ingest requests before reading them (src/domain/admission.ts). */
  readonly admission: {
    readonly bufferItems: number;
    readonly bufferSeconds: number;
    readonly maxStallMs: number;
    readonly targetDelayMs: number;
    readonly intervalMs: number;
    readonly maxQueueDepth: number;
    readonly maxRedisMemory: number;
    readonly diskFloorBytes: number;
  };
  /** Spike protection never holds a project under this many error events a minute (src/domain/quotas.ts). */
  readonly spikeFloorPerMinute: number;
  /** Connections the kernel holds for the API before it accepts them (listen backlog). */
  readonly listenBacklog: number;
  /** Rounds of taking events an API process rehearses before it listens (src/services/warm-up.ts); 0: none. */
  readonly ingestRehearsals: number;
  /** How long (ms) an idle writer to a one-writer store waits for more items while they come often (src/util/group-commit.ts); 0: never. */
  readonly writeLingerMs: number;
  /** Source maps (issue 52): bytes of bundles a project keeps (its oldest go first), of one bundle, of parsed maps a worker caches. */
  readonly sourcemaps: { readonly projectBytes: number; readonly bundleBytes: number; readonly cacheBytes: number };
  /**
   * Traces and logs (issue 69): how long each kind is kept (days), the random share of transactions kept whole
   * beside the failed and the slowest, the slowest kept per group and hour, and a project's bytes of samples a day.
   */
  readonly traces: {
    readonly aggregateDays: number;
    readonly sampleDays: number;
    readonly logDays: number;
    readonly sampleShare: number;
    readonly slowestPerHour: number;
    readonly sampleBytesPerDay: number;
    readonly apdexMs: number;
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Documented defaults; README's configuration table mirrors this list. */
export const DEFAULTS = {
  HOST: '127.0.0.1',
  PORT: '3000',
  MONGODB_DB: 'lookout',
  LOOKOUT_DATA_DIR: '.data',
  LOOKOUT_CACHE_DIR: '.cache',
  LOOKOUT_EMBEDDED_REDIS_PORT: '6390',
  LOOKOUT_EMBEDDED_MONGODB_PORT: '27027',
  LOG_LEVEL: 'info',
  BODY_LIMIT_BYTES: '1048576',
  QUEUE_PREFIX: 'lookout',
  WORKER_CONCURRENCY_SESSIONS: '1',
  WORKER_CONCURRENCY_EVENTS: '4',
  WORKER_CONCURRENCY_NOTIFICATIONS: '8',
  WORKER_CONCURRENCY_MAINTENANCE: '1',
  WORKER_NICE: '10',
  SHUTDOWN_TIMEOUT_MS: '10000',
  KEY_CACHE_SECONDS: '5',
  SESSIONS_RATE_LIMIT_PER_MINUTE: '3000',
  DID_HASH_KEY: '',
  ENCRYPTION_KEY: '',
  SSO_ALLOW_PRIVATE: 'false',
  SWEEP_GRACE_SECONDS: '30',
  JOB_LOCK_MS: '30000',
  ADMIN_USERNAME: 'admin',
  ADMIN_PASSWORD: '',
  SESSION_UPDATE_WINDOW_HOURS: '120',
  FLUSH_INTERVAL_MS: '1000',
  EVENT_RETENTION_DAYS: '90',
  COOKIE_SECURE: 'false',
  TRUST_PROXY: '',
  PUBLIC_URL: '',
  SMTP_URL: '',
  MAIL_FROM: 'Lookout <lookout@localhost>',
  WEBHOOK_ALLOW_PRIVATE: 'false',
  PROBE_ALLOW_PRIVATE: 'false',
  STORE_TRACE_DIR: '',
  PERF_RETENTION_DAYS: '395',
  TRACE_SAMPLE_RETENTION_DAYS: '14',
  LOG_RETENTION_DAYS: '30',
  TRACE_SAMPLE_PERCENT: '2',
  TRACE_SLOWEST_PER_HOUR: '3',
  TRACE_SAMPLE_MB_PER_DAY: '50',
  APDEX_THRESHOLD_MS: '300',
  PERF_ALERT_INTERVAL_SECONDS: '60',
  ADMIT_BUFFER_ITEMS: '2500',
  ADMIT_BUFFER_SECONDS: '2',
  ADMIT_MAX_STALL_MS: '10000',
  ADMIT_TARGET_DELAY_MS: '250',
  ADMIT_INTERVAL_MS: '1000',
  ADMIT_MAX_QUEUE_DEPTH: '2000',
  ADMIT_REDIS_MEMORY_PERCENT: '0',
  DISK_FLOOR_MB: '500',
  SOURCEMAPS_PROJECT_MB: '1024',
  SOURCEMAPS_BUNDLE_MB: '200',
  SOURCEMAPS_CACHE_MB: '256',
  LISTEN_BACKLOG: '4096',
  INGEST_REHEARSALS: '300',
  WRITE_LINGER_MS: '5',
  SPIKE_FLOOR_PER_MINUTE: '120000',
  BACKUP_EVERY_HOURS: '0',
  BACKUP_DIR: '',
  BACKUP_KEEP: '7',
} as const;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const problems: string[] = [];
  const raw = (name: keyof typeof DEFAULTS): string => {
    const value = env[name];
    return value === undefined || value === '' ? DEFAULTS[name] : value;
  };
  const int = (name: keyof typeof DEFAULTS, min: number, max: number): number => {
    const text = raw(name);
    const value = Number(text);
    if (!/^\d+$/.test(text) || value < min || value > max) {
      problems.push(`${name}=${JSON.stringify(text)}: expected an integer from ${min} to ${max}`);
      return Number(DEFAULTS[name]);
    }
    return value;
  };
  const url = (name: string, schemes: string[]): string | null => {
    const text = env[name];
    if (text === undefined || text === '') return null;
    let scheme: string;
    try {
      scheme = new URL(text).protocol.replace(/:$/, '');
    } catch {
      problems.push(`${name}: not a URL`);
      return null;
    }
    if (!schemes.includes(scheme)) {
      problems.push(`${name}: expected a ${schemes.join(' or ')} URL, got ${scheme}:`);
      return null;
    }
    return text;
  };

  const logLevel = raw('LOG_LEVEL');
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    problems.push(`LOG_LEVEL=${JSON.stringify(logLevel)}: expected one of ${LOG_LEVELS.join(', ')}`);
  }
  const mongoDb = raw('MONGODB_DB');
  if (!['true', 'false'].includes(raw('SSO_ALLOW_PRIVATE'))) problems.push(`SSO_ALLOW_PRIVATE=${JSON.stringify(raw('SSO_ALLOW_PRIVATE'))}: expected true or false`);
  if (!['true', 'false'].includes(raw('PROBE_ALLOW_PRIVATE'))) problems.push(`PROBE_ALLOW_PRIVATE=${JSON.stringify(raw('PROBE_ALLOW_PRIVATE'))}: expected true or false`);
  if (!['true', 'false'].includes(raw('WEBHOOK_ALLOW_PRIVATE'))) problems.push(`WEBHOOK_ALLOW_PRIVATE=${JSON.stringify(raw('WEBHOOK_ALLOW_PRIVATE'))}: expected true or false`);
  if (!['true', 'false'].includes(raw('COOKIE_SECURE'))) problems.push(`COOKIE_SECURE=${JSON.stringify(raw('COOKIE_SECURE'))}: expected true or false`);
  const trustProxy = raw('TRUST_PROXY').split(',').map((t) => t.trim()).filter(Boolean);
  for (const entry of trustProxy) {
    if (!isAddressOrRange(entry)) problems.push(`TRUST_PROXY: ${JSON.stringify(entry)} is not an IP address or CIDR range (e.g. 10.0.0.5, 10.0.0.0/8, ::1)`);
  }
  if (!/^[A-Za-z0-9_-]{1,63}$/.test(mongoDb)) {
    problems.push(`MONGODB_DB=${JSON.stringify(mongoDb)}: letters, digits, _ and - only, at most 63`);
  }
  const redisCluster = clusterNodes(env.REDIS_CLUSTER_NODES ?? '', problems);
  if (redisCluster && env.REDIS_URL) {
    problems.push('REDIS_URL and REDIS_CLUSTER_NODES are both set: REDIS_URL names one server, REDIS_CLUSTER_NODES a cluster; set one');
  }
  // On a cluster BullMQ needs every key of a queue in one slot: the prefix is a hash tag.
  const queuePrefix = redisCluster && !env.QUEUE_PREFIX ? `{${DEFAULTS.QUEUE_PREFIX}}` : raw('QUEUE_PREFIX');
  if (!/^[A-Za-z0-9_{}:-]{1,64}$/.test(queuePrefix)) {
    problems.push(`QUEUE_PREFIX=${JSON.stringify(queuePrefix)}: letters, digits, _ - : { } only`);
  } else if (redisCluster && !/^\{[^{}]+\}/.test(queuePrefix)) {
    problems.push(`QUEUE_PREFIX=${JSON.stringify(queuePrefix)} with REDIS_CLUSTER_NODES: a cluster needs the prefix to start with a hash tag, such as {lookout}`);
  }

  const config: Config = {
    host: raw('HOST'),
    port: int('PORT', 0, 65535),
    redisUrl: url('REDIS_URL', ['redis', 'rediss']),
    redisCluster,
    mongoUrl: url('MONGODB_URL', ['mongodb', 'mongodb+srv']),
    mongoDb,
    dataDir: path.resolve(cwd, raw('LOOKOUT_DATA_DIR')),
    cacheDir: path.resolve(cwd, raw('LOOKOUT_CACHE_DIR')),
    embeddedRedisPort: int('LOOKOUT_EMBEDDED_REDIS_PORT', 1, 65535),
    embeddedMongoPort: int('LOOKOUT_EMBEDDED_MONGODB_PORT', 1, 65535),
    logLevel: logLevel as Config['logLevel'],
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 1024, 64 * 1024 * 1024),
    queuePrefix,
    concurrency: {
      sessions: int('WORKER_CONCURRENCY_SESSIONS', 1, 1000),
      events: int('WORKER_CONCURRENCY_EVENTS', 1, 1000),
      notifications: int('WORKER_CONCURRENCY_NOTIFICATIONS', 1, 1000),
      maintenance: int('WORKER_CONCURRENCY_MAINTENANCE', 1, 100),
    },
    workerNice: int('WORKER_NICE', 0, 19),
    shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', 100, 600_000),
    keyCacheSeconds: int('KEY_CACHE_SECONDS', 0, 3600),
    sessionsRateLimit: int('SESSIONS_RATE_LIMIT_PER_MINUTE', 1, 100_000_000),
    didHashKey: raw('DID_HASH_KEY') || null,
    encryptionKey: raw('ENCRYPTION_KEY') || null,
    ssoAllowPrivate: raw('SSO_ALLOW_PRIVATE') === 'true',
    sweepGraceMs: int('SWEEP_GRACE_SECONDS', 1, 86_400) * 1000,
    jobLockMs: int('JOB_LOCK_MS', 1000, 600_000),
    admin: raw('ADMIN_PASSWORD') ? { username: raw('ADMIN_USERNAME'), password: raw('ADMIN_PASSWORD') } : null,
    sessionUpdateWindowMs: int('SESSION_UPDATE_WINDOW_HOURS', 1, 90 * 24) * 3600_000,
    flushIntervalMs: int('FLUSH_INTERVAL_MS', 50, 1000),
    perfAlertsEveryMs: int('PERF_ALERT_INTERVAL_SECONDS', 1, 3600) * 1000,
    eventRetentionDays: int('EVENT_RETENTION_DAYS', 1, 3650),
    cookieSecure: raw('COOKIE_SECURE') === 'true',
    trustProxy,
    publicUrl: (url('PUBLIC_URL', ['http', 'https']) ?? `http://${raw('HOST').includes(':') ? `[${raw('HOST')}]` : raw('HOST')}:${raw('PORT')}`).replace(/\/+$/, ''),
    smtpUrl: url('SMTP_URL', ['smtp', 'smtps']),
    mailFrom: raw('MAIL_FROM'),
    webhookAllowPrivate: raw('WEBHOOK_ALLOW_PRIVATE') === 'true',
    probeAllowPrivate: raw('PROBE_ALLOW_PRIVATE') === 'true',
    storeTraceDir: raw('STORE_TRACE_DIR') ? path.resolve(cwd, raw('STORE_TRACE_DIR')) : null,
    admission: {
      bufferItems: int('ADMIT_BUFFER_ITEMS', 1, 10_000_000),
      bufferSeconds: int('ADMIT_BUFFER_SECONDS', 0, 3600),
      maxStallMs: int('ADMIT_MAX_STALL_MS', 1, 3_600_000),
      targetDelayMs: int('ADMIT_TARGET_DELAY_MS', 1, 600_000),
      intervalMs: int('ADMIT_INTERVAL_MS', 1, 600_000),
      maxQueueDepth: int('ADMIT_MAX_QUEUE_DEPTH', 1, 100_000_000),
      // 0: never (a full Redis does not lose what is acknowledged: it waits in MongoDB, issue 25)
      maxRedisMemory: int('ADMIT_REDIS_MEMORY_PERCENT', 0, 100) / 100 || Infinity,
      diskFloorBytes: int('DISK_FLOOR_MB', 0, 100_000_000) * 1024 * 1024,
    },
    listenBacklog: int('LISTEN_BACKLOG', 1, 65535),
    ingestRehearsals: int('INGEST_REHEARSALS', 0, 100_000),
    writeLingerMs: int('WRITE_LINGER_MS', 0, 1000),
    spikeFloorPerMinute: int('SPIKE_FLOOR_PER_MINUTE', 1, 1_000_000_000),
    backups: {
      // 0: no scheduled backups
      everyMs: int('BACKUP_EVERY_HOURS', 0, 24 * 365) * 3600_000,
      dir: path.resolve(cwd, raw('BACKUP_DIR') || path.join(raw('LOOKOUT_DATA_DIR'), 'backups')),
      keep: int('BACKUP_KEEP', 1, 10_000),
    },
    sourcemaps: {
      projectBytes: int('SOURCEMAPS_PROJECT_MB', 1, 1_000_000) * 1024 * 1024,
      bundleBytes: int('SOURCEMAPS_BUNDLE_MB', 1, 2048) * 1024 * 1024,
      cacheBytes: int('SOURCEMAPS_CACHE_MB', 1, 100_000) * 1024 * 1024,
    },
    traces: {
      aggregateDays: int('PERF_RETENTION_DAYS', 15, 3650),
      sampleDays: int('TRACE_SAMPLE_RETENTION_DAYS', 1, 3650),
      logDays: int('LOG_RETENTION_DAYS', 1, 3650),
      sampleShare: int('TRACE_SAMPLE_PERCENT', 0, 100) / 100,
      slowestPerHour: int('TRACE_SLOWEST_PER_HOUR', 0, 100),
      sampleBytesPerDay: int('TRACE_SAMPLE_MB_PER_DAY', 0, 1_000_000) * 1024 * 1024,
      apdexMs: int('APDEX_THRESHOLD_MS', 1, 600_000),
    },
  };
  if (config.admin && config.admin.password.length < 12) {
    problems.push('ADMIN_PASSWORD: at least 12 characters');
  }
  if (config.admin && (config.admin.username.includes(':') || config.admin.username.length > 64)) {
    problems.push('ADMIN_USERNAME: at most 64 characters, no colon (HTTP Basic)');
  }
  if (config.didHashKey !== null && config.didHashKey.length < 32) {
    problems.push('DID_HASH_KEY: at least 32 characters (for example 64 random hex digits)');
  }
  if (config.encryptionKey !== null && !/^[0-9a-fA-F]{64}$/.test(config.encryptionKey)) {
    problems.push('ENCRYPTION_KEY: 64 hex digits (32 random bytes, for example `openssl rand -hex 32`)');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

function deepFreeze<T extends object>(value: T): T {
  for (const inner of Object.values(value)) {
    if (inner && typeof inner === 'object') deepFreeze(inner as object);
  }
  return Object.freeze(value);
}

/** REDIS_CLUSTER_NODES: `host:port,host:port,...` (IPv6 hosts in brackets); '' means no cluster. */
function clusterNodes(text: string, problems: string[]): { host: string; port: number }[] | null {
  if (text.trim() === '') return null;
  const nodes: { host: string; port: number }[] = [];
  for (const entry of text.split(',').map((e) => e.trim())) {
    const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(entry);
    const port = Number(m?.[2]);
    if (!m || port < 1 || port > 65535) {
      problems.push(`REDIS_CLUSTER_NODES: ${JSON.stringify(entry)} is not host:port`);
      continue;
    }
    nodes.push({ host: m[1]!.replace(/^\[|\]$/g, ''), port });
  }
  return nodes;
}

/** An IP address, or a CIDR range of them (`10.0.0.0/8`, `fd00::/8`). */
function isAddressOrRange(text: string): boolean {
  try {
    if (text.includes('/')) ipaddr.parseCIDR(text);
    else ipaddr.parse(text);
    return ipaddr.isValid(text.split('/')[0]!);
  } catch {
    return false;
  }
}
