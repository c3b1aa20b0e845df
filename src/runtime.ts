/**
 * Builds what every process shares from a config and store URLs: the
 * MongoDB connection, stores, services. The API, workers and the admin CLI
 * all start here.
 */
import type { Config } from '../config/index.ts';
import type { Logger } from './log.ts';
import { withLock } from './queues/lock.ts';
import { makeQueues } from './queues/registry.ts';
import { makeAdminService } from './services/admin.service.ts';
import { makeEventsService } from './services/events.service.ts';
import { makeIssuesService } from './services/issues.service.ts';
import { makeKeyResolver } from './services/key-resolver.ts';
import { makeSdkService } from './services/sdk.service.ts';
import { makeStores } from './store/index.ts';
import { connectMongo } from './store/mongo.ts';

export interface RuntimeUrls {
  redisUrl: string;
  mongoUrl: string;
}

export async function makeRuntime(config: Config, urls: RuntimeUrls, log: Logger) {
  const mongo = await connectMongo(urls.mongoUrl, config.mongoDb);
  const stores = makeStores(mongo.db);
  await stores.ensureIndexes();
  const resolver = makeKeyResolver(stores.projects, config.keyCacheSeconds);
  const sdk = makeSdkService(stores, resolver);
  const admin = makeAdminService(stores, sdk);
  const queues = makeQueues(urls.redisUrl, config.queuePrefix);
  const events = makeEventsService(stores.events, queues, log);
  /** Serializes every write to one issue across processes. */
  const lockIssue = <T>(id: number, fn: () => Promise<T>) => withLock(queues.connection, `${config.queuePrefix}:lock:issue:${id}`, fn);
  const issues = makeIssuesService(stores.issues, stores.events, lockIssue);
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
    events,
    issues,
    lockIssue,
    async close() {
      await queues.close();
      await mongo.client.close();
    },
  };
}
export type Runtime = Awaited<ReturnType<typeof makeRuntime>>;
