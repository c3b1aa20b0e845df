/**
 * Resolves the Redis and MongoDB URLs: the configured ones, or embedded
 * servers started in the data folder when a URL is unset.
 */
import path from 'node:path';
import type { Config } from '../../config/index.ts';
import { startFerret } from './ferretdb.ts';
import type { ManagedProcess } from './process.ts';
import { startRedis } from './redis.ts';

export interface StoreUrls {
  redisUrl: string;
  mongoUrl: string;
  stop(): Promise<void>;
}

export async function startStores(config: Config, log: (line: string) => void): Promise<StoreUrls> {
  const started: ManagedProcess[] = [];
  const stop = async () => {
    await Promise.all(started.map((p) => p.stop()));
  };
  try {
    let redisUrl = config.redisUrl;
    if (redisUrl === null) {
      const redis = await startRedis({ dir: path.join(config.dataDir, 'redis'), port: config.embeddedRedisPort });
      started.push(redis);
      redisUrl = redis.url;
      log(`embedded redis-server on ${redisUrl} (data in ${path.join(config.dataDir, 'redis')})`);
    }
    let mongoUrl = config.mongoUrl;
    if (mongoUrl === null) {
      const ferret = await startFerret({
        dir: path.join(config.dataDir, 'ferretdb'),
        port: config.embeddedMongoPort,
        cacheDir: config.cacheDir,
        log,
      });
      started.push(ferret);
      mongoUrl = ferret.url;
      log(`embedded FerretDB on ${mongoUrl} (data in ${path.join(config.dataDir, 'ferretdb')})`);
    }
    return { redisUrl, mongoUrl, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The URLs a CLI or worker uses to reach stores that `npm start` runs. */
export function storeUrls(config: Config): { redisUrl: string; mongoUrl: string } {
  return {
    redisUrl: config.redisUrl ?? `redis://127.0.0.1:${config.embeddedRedisPort}`,
    mongoUrl: config.mongoUrl ?? `mongodb://127.0.0.1:${config.embeddedMongoPort}/`,
  };
}
