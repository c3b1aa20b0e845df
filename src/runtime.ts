/**
 * Builds what every process shares from a config and store URLs: the
 * MongoDB connection, stores, services. The API, workers and the admin CLI
 * all start here.
 */
import crypto from 'node:crypto';
import type { Config } from '../config/index.ts';
import { makeValidator } from './validation/validator.ts';
import type { Logger } from './log.ts';
import { makeMetrics } from './metrics/metrics.ts';
import { connectRedis, type RedisClient, type RedisTarget } from './redis/connect.ts';
import { makeQueues } from './queues/registry.ts';
import { makeAccountsService } from './services/accounts.service.ts';
import { makeApiTokensService } from './services/api-tokens.service.ts';
import { MISSING_TTL_MS, makeSourcemapLookup } from './services/sourcemap-lookup.ts';
import { makeSourcemapsService } from './services/sourcemaps.service.ts';
import { makeSentryApiService } from './services/sentry-api.service.ts';
import { makeSymbolication } from './services/symbolication.ts';
import { makeBurstsService } from './services/bursts.service.ts';
import { makeIncidentsService } from './services/incidents.service.ts';
import { makeMonitorsService } from './services/monitors.service.ts';
import { makeMonitorsAdmin } from './services/monitors-admin.service.ts';
import { makeInstallationsService } from './services/installations.service.ts';
import { makeProbesService } from './services/probes.service.ts';
import { makeProbesState } from './state/probes.state.ts';
import { makeInstallationsState } from './state/installations.state.ts';
import { makeSsoService } from './services/sso.service.ts';
import { makeSealedBox } from './crypto/sealed.ts';
import { makeAdminService } from './services/admin.service.ts';
import { makeEventsService } from './services/events.service.ts';
import { makeSentryService } from './services/sentry.service.ts';
import { makeFeedbackService } from './services/feedback.service.ts';
import { makeIngestStats } from './state/ingest-stats.ts';
import { makeQuotaCounter } from './state/quotas.ts';
import { makeQuotaService } from './services/quota.service.ts';
import { makeIssuesService } from './services/issues.service.ts';
import { makeKeyResolver } from './http/key-resolver.ts';
import { makeNotifyService } from './notify/channels.service.ts';
import { makeDecisionsService } from './services/decisions.service.ts';
import { makeBouncersService } from './services/bouncers.service.ts';
import { makeDecisionsState } from './state/decisions.state.ts';
import { makeNotifyState } from './notify/notify.state.ts';
import { makeReleasesService } from './services/releases.service.ts';
import { makeSdkService } from './services/sdk.service.ts';
import { makePartWriter } from './services/session-parts.ts';
import { makeDidHasher, makeSessionsService } from './services/sessions.service.ts';
import { makeCheckInsService } from './services/checkins.service.ts';
import { makeTracesService } from './services/traces.service.ts';
import { makePerfRollup } from './services/perf-rollup.service.ts';
import { makePerformanceService } from './services/performance.service.ts';
import { makeTracesState } from './state/traces.state.ts';
import { makeMonitorsState } from './state/monitors.state.ts';
import { makeIssuesState } from './state/issues.state.ts';
import { makeBurstsState } from './state/bursts.state.ts';
import { makeIssueReads } from './state/issue-reads.ts';
import { makeProjectChanges } from './state/project-changes.ts';
import { makeStateKeeper } from './state/rebuild.ts';
import { makeSessionState } from './state/sessions.state.ts';
import { makeStores } from './store/index.ts';
import { alertsOf, type AlertSettings } from './store/projects.store.ts';
import { cachedFor } from './util/cached.ts';
import type { GroupWrites } from './util/group-commit.ts';
import { connectMongo } from './store/mongo.ts';
import { runMigrations } from './store/migrations/index.ts';

export interface RuntimeUrls {
  redisUrl: string;
  mongoUrl: string;
}

/** Redis did not answer within a command-line tool's patience (`storeTimeoutMs`). */
export class StoreTimeoutError extends Error {
  override name = 'StoreTimeoutError';
}

/**
 * `storeTimeoutMs`: how long to wait for each store before failing (the
 * admin CLI's few seconds); unset, the drivers' own patience, and Redis is
 * not waited for (the API serves while it is away).
 */
export async function makeRuntime(config: Config, urls: RuntimeUrls, log: Logger, opts: { storeTimeoutMs?: number } = {}) {
  const mongo = await connectMongo(urls.mongoUrl, config.mongoDb, opts.storeTimeoutMs, config.storeTraceDir);
  const stores = makeStores(mongo);
  await stores.ensureIndexes();
  await runMigrations(mongo.db, log);
  const redisTarget: RedisTarget = { url: urls.redisUrl, cluster: config.redisCluster };
  /** The hot state of release health (src/state/), on its own connection; a failed call is retried by its job. */
  const stateRedis = connectRedis(redisTarget, { maxRetriesPerRequest: 5 });
  stateRedis.on('error', (err: Error) => log.debug({ err: err.message }, 'state connection error; reconnecting'));
  const resolver = makeKeyResolver(stores.projects, config.keyCacheSeconds);
  const changes = makeProjectChanges({ redis: stateRedis, target: redisTarget, prefix: config.queuePrefix, log });
  const sdk = makeSdkService(stores, resolver);
  const validator = makeValidator();
  const admin = makeAdminService(stores, sdk, changes, validator);
  const queues = makeQueues(redisTarget, config.queuePrefix);
  const metrics = makeMetrics();
  /**
   * Raw writes: on FerretDB one at a time (SQLite has one writer, each write a commit), an idle writer waiting a
   * moment for more items while they come often (src/util/group-commit.ts); on MongoDB four at once, none waiting.
   */
  const writes: GroupWrites = mongo.profile.singleWriter ? { maxInFlight: 1, lingerMs: config.writeLingerMs } : { maxInFlight: 4, lingerMs: 0 };
  const ingestStats = makeIngestStats(stateRedis, { prefix: config.queuePrefix, onDropped: (type, reason, n) => metrics.dropped(type, reason, n) });
  const notify = makeNotifyState(stateRedis, { prefix: config.queuePrefix });
  /** Each project's quotas and spike protection, counted here and shared through Redis; a spike notifies its channels. */
  const quotas = makeQuotaCounter(stateRedis, { prefix: config.queuePrefix, spikeFloorPerMinute: config.spikeFloorPerMinute, onNotified: (project) => void notify.markProject(project).catch(() => {}) });
  const quota = makeQuotaService({ quotas, stats: ingestStats });
  const events = makeEventsService({ validator, events: stores.events, queues, log, metrics, stats: ingestStats, quota, writes });
  if (opts.storeTimeoutMs !== undefined) await answersWithin(stateRedis, opts.storeTimeoutMs);
  const state = makeSessionState(stateRedis, { prefix: config.queuePrefix, windowMs: config.sessionUpdateWindowMs });
  const issuesState = makeIssuesState(stateRedis, { prefix: config.queuePrefix });
  const keeper = makeStateKeeper({ state, store: stores.sessions, issuesState, issuesStore: stores.issues, eventsStore: stores.events, feedbackStore: stores.feedback, expiredStore: stores.expired, log });
  // Without ENCRYPTION_KEY the sealing key is kept in the database: sealed secrets then resist a leaked log, not a leaked database.
  const sealingKey = config.encryptionKey ?? (await stores.settings.getOrCreate('encryption_key', () => crypto.randomBytes(32).toString('hex')));
  const box = makeSealedBox(sealingKey);
  const accounts = makeAccountsService({ stores, redis: stateRedis, prefix: config.queuePrefix, box });
  const tokens = makeApiTokensService({ stores, accounts });
  const sso = makeSsoService({ stores, redis: stateRedis, prefix: config.queuePrefix, box, accounts, allowPrivate: config.ssoAllowPrivate, log });
  const issueReads = makeIssueReads(stateRedis, { prefix: config.queuePrefix });
  const feedback = makeFeedbackService({ feedback: stores.feedback, events: stores.events, state: issuesState, reads: issueReads, keeper });
  // the remap waits out the workers' memory of keys no upload had (MISSING_TTL_MS), so events mapped meanwhile are in it
  const sourcemaps = makeSourcemapsService({ stores, limits: config.sourcemaps, log, remap: (project) => queues.enqueueBulk('sourcemaps.remap', [{ payload: { project }, delay: MISSING_TTL_MS + 1000 }]) });
  const issues = makeIssuesService({
    issues: stores.issues,
    events: stores.events,
    state: issuesState,
    reads: issueReads,
    keeper,
    feedback,
    attachments: stores.attachments,
    activity: stores.activity,
    notifyProject: (project) => notify.markProject(project),
    uploadedSince: (project, event) => sourcemaps.uploadedSince(project, event),
  });
  const didKey = config.didHashKey ?? (await stores.settings.getOrCreate('did_hash_key', () => crypto.randomBytes(32).toString('hex')));
  const sessions = makeSessionsService({ store: stores.sessions, queues, validator, hashDid: makeDidHasher(didKey), log, metrics, stats: ingestStats, quota, windowMs: config.sessionUpdateWindowMs, writes });
  const releases = makeReleasesService(stores.sessions);
  const checkIns = makeCheckInsService({ store: stores.checkins, queues, stats: ingestStats, log, writes });
  const monitorsState = makeMonitorsState(stateRedis, { prefix: config.queuePrefix });
  const traces = makeTracesService({ store: stores.traces, queues, stats: ingestStats, quota, log, writes });
  const tracesState = makeTracesState(stateRedis, config.queuePrefix, config.traces);
  /** Every project's id, read at most once a second per process (the rollup and the performance rules go over them). */
  const projectIds = cachedFor(1000, async (_: void) => (await stores.projects.list()).map((p) => p._id));
  const perfRollup = makePerfRollup({ store: stores.traces, redis: stateRedis, prefix: config.queuePrefix, projectIds: () => projectIds(), changed: tracesState.bucketsChanged, log, config });
  const performance = makePerformanceService({ store: stores.traces, index: tracesState, apdexMs: config.traces.apdexMs, sampleDays: config.traces.sampleDays });
  const sentryApi = makeSentryApiService({ stores, issues, releases, publicUrl: config.publicUrl });
  const sentry = makeSentryService({ events, sessions, feedback, checkIns, traces, attachments: stores.attachments, stats: ingestStats });
  /** The worker's parts of the session batches it applies (src/services/session-parts.ts). */
  const sessionParts = makePartWriter({ store: stores.sessions, list: state.partedList, log });
  const notifications = makeNotifyService({ stores, notify, queues, validator, config });
  /** A project's notification channels, read at most once a second per process (a new channel is heard of within a second). */
  const channels = cachedFor(1000, (project: number) => stores.channels.ofProject(project));
  /** A project's sign-in burst settings, read at most once a second per process (changes hold within a second). */
  const alertSettings = cachedFor(1000, async (project: number): Promise<AlertSettings> => alertsOf((await stores.projects.get(project))?.alerts));
  const burstsState = makeBurstsState(stateRedis, { prefix: config.queuePrefix });
  const bursts = makeBurstsService({ issuesState, burstsState, alertSettings });
  const incidents = makeIncidentsService({ issuesState, keeper, activity: stores.activity, channels, notify });
  const monitors = makeMonitorsService({ state: monitorsState, store: stores.checkins, incidents, maintenance: stores.maintenance });
  const monitorsAdmin = makeMonitorsAdmin({ state: monitorsState, store: stores.checkins, maintenance: stores.maintenance });
  const probes = makeProbesService({ store: stores.probes, state: makeProbesState(stateRedis, { prefix: config.queuePrefix }), incidents, allowPrivate: config.probeAllowPrivate, log });
  const installations = makeInstallationsService({ state: makeInstallationsState(stateRedis, { prefix: config.queuePrefix }), projects: stores.projects, incidents });
  const decisionsState = makeDecisionsState(stateRedis, { prefix: config.queuePrefix });
  const decisions = makeDecisionsService(decisionsState);
  /** The worker's source maps: found by debug ID or URL, parsed maps cached (SOURCEMAPS_CACHE_MB). */
  const symbolication = makeSymbolication({
    events: stores.events,
    lookup: makeSourcemapLookup({ store: stores.sourcemaps, cacheBytes: config.sourcemaps.cacheBytes }),
    redis: stateRedis,
    prefix: config.queuePrefix,
    log,
    metrics,
  });
  const bouncers = makeBouncersService({ stores, decisions: decisionsState, changes, keyCacheSeconds: config.keyCacheSeconds, log });
  return {
    config,
    urls,
    redisTarget,
    /** the connection the hot state is read and written on */
    redis: stateRedis,
    log,
    mongo,
    stores,
    resolver,
    changes,
    sdk,
    admin,
    accounts,
    tokens,
    sso,
    queues,
    metrics,
    events,
    issues,
    sessionState: state,
    issuesState,
    keeper,
    validator,
    sessions,
    checkIns,
    traces,
    tracesState,
    perfRollup,
    performance,
    projectIds: () => projectIds(),
    monitorsState,
    monitors,
    monitorsAdmin,
    installations,
    probes,
    ingestStats,
    quotas,
    quota,
    sentry,
    feedback,
    sessionParts,
    releases,
    notify,
    notifications,
    channels,
    alertSettings,
    bursts,
    burstsState,
    decisions,
    bouncers,
    sourcemaps,
    sentryApi,
    symbolication,
    async close() {
      await Promise.all([sessions.drain(), events.drain(), checkIns.drain(), traces.drain(), sessionParts.drain()]);
      await ingestStats.close();
      await quotas.close();
      await queues.close();
      stateRedis.disconnect();
      await mongo.client.close();
    },
  };
}

async function answersWithin(redis: RedisClient, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreTimeoutError(`Redis did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([redis.ping(), timeout]);
  } catch (err) {
    redis.disconnect();
    throw err instanceof StoreTimeoutError ? err : new StoreTimeoutError((err as Error).message);
  } finally {
    clearTimeout(timer);
  }
}

export type Runtime = Awaited<ReturnType<typeof makeRuntime>>;
