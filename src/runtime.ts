/**
 * Builds what every process shares from a config and store URLs: the
 * MongoDB connection, stores, services. The API, workers and the admin CLI
 * all start here.
 */
import crypto from 'node:crypto';
import type { Config } from '../config/index.ts';
import { makeValidator } from './http/validation.ts';
import type { Logger } from './log.ts';
import { makeMetrics } from './metrics/metrics.ts';
import { withLock } from './queues/lock.ts';
import { Redis } from 'ioredis';
import { makeQueues } from './queues/registry.ts';
import { makeAdminService } from './services/admin.service.ts';
import { makeEventsService } from './services/events.service.ts';
import { makeIssuesService } from './services/issues.service.ts';
import { makeKeyResolver } from './services/key-resolver.ts';
import { makeReleasesService } from './services/releases.service.ts';
import { makeSdkService } from './services/sdk.service.ts';
import { makeDidHasher, makeSessionsService } from './services/sessions.service.ts';
import { makeStateKeeper } from './state/rebuild.ts';
import { makeSessionState } from './state/sessions.state.ts';
import { makeStores } from './store/index.ts';
import { connectMongo } from './store/mongo.ts';

export interface RuntimeUrls {
  redisUrl: string;
  mongoUrl: string;
}

export async function makeRuntime(config: Config, urls: RuntimeUrls, log: Logger) {
  const mongo = await connectMongo(urls.mongoUrl, config.mongoDb);
  const stores = makeStores(mongo);
  await stores.ensureIndexes();
  const resolver = makeKeyResolver(stores.projects, config.keyCacheSeconds);
  const sdk = makeSdkService(stores, resolver);
  const admin = makeAdminService(stores, sdk);
  const queues = makeQueues(urls.redisUrl, config.queuePrefix);
  const metrics = makeMetrics();
  const events = makeEventsService(stores.events, queues, log, metrics);
  /** Serializes every write to one issue across processes. */
  const lockIssue = <T>(id: number, fn: () => Promise<T>) => withLock(queues.connection, `${config.queuePrefix}:lock:issue:${id}`, fn);
  const issues = makeIssuesService(stores.issues, stores.events, lockIssue);
  /** The hot state of release health (src/state/), on its own connection; a failed call is retried by its job. */
  const stateRedis = new Redis(urls.redisUrl, { maxRetriesPerRequest: 5 });
  stateRedis.on('error', (err: Error) => log.debug({ err: err.message }, 'state connection error; reconnecting'));
  const state = makeSessionState(stateRedis, { prefix: config.queuePrefix, windowMs: config.sessionUpdateWindowMs });
  const keeper = makeStateKeeper({ state, store: stores.sessions, log });
  const validator = makeValidator();
  const didKey = config.didHashKey ?? (await stores.settings.getOrCreate('did_hash_key', () => crypto.randomBytes(32).toString('hex')));
  const sessions = makeSessionsService({ store: stores.sessions, queues, validator, hashDid: makeDidHasher(didKey), log, metrics, windowMs: config.sessionUpdateWindowMs, writesInFlight: mongo.ferretdb ? 1 : 4 });
  const releases = makeReleasesService(stores.sessions);
  return {
    config,
    urls,
    log,
    mongo,
    stores,
    resolver,
    sdk,
    admin,
    queues,
    metrics,
    events,
    issues,
    lockIssue,
    state,
    keeper,
    validator,
    sessions,
    releases,
    async close() {
      await sessions.drain();
      await queues.close();
      stateRedis.disconnect();
      await mongo.client.close();
    },
  };
}
export type Runtime = Awaited<ReturnType<typeof makeRuntime>>;
