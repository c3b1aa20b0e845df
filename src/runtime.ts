/**
 * Builds what every process shares from a config and store URLs: the
 * MongoDB connection, stores, services. The API, workers and the admin CLI
 * all start here.
 */
import type { Config } from '../config/index.ts';
import type { Logger } from './log.ts';
import { makeAdminService } from './services/admin.service.ts';
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
  return {
    config,
    urls,
    log,
    mongo,
    stores,
    resolver,
    sdk,
    admin,
    async close() {
      await mongo.client.close();
    },
  };
}
export type Runtime = Awaited<ReturnType<typeof makeRuntime>>;
