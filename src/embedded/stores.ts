/**
 * Resolves the Redis and MongoDB URLs: the configured ones, or embedded
 * servers started in the data folder when a URL is unset.
 */
import path from 'node:path';
import type { Config } from '../../config/index.ts';
import { ensureFerretBinary, startFerret } from './ferretdb.ts';
import { readInstance } from './instance.ts';
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
    // A first run builds FerretDB; done before any store runs, nothing is left behind if it fails or is interrupted.
    if (config.mongoUrl === null) ensureFerretBinary(config.cacheDir, log);
    let redisUrl = config.redisUrl;
    if (redisUrl === null) {
      const redis = await startRedis({
        dir: path.join(config.dataDir, 'redis'),
        port: config.embeddedRedisPort,
        portVariable: 'LOOKOUT_EMBEDDED_REDIS_PORT',
      });
      started.push(redis);
      redisUrl = redis.url;
      log(`embedded redis-server on ${redisUrl} (data in ${path.join(config.dataDir, 'redis')})`);
    }
    let mongoUrl = config.mongoUrl;
    if (mongoUrl === null) {
      const ferret = await startFerret({
        dir: path.join(config.dataDir, 'ferretdb'),
        port: config.embeddedMongoPort,
        portVariable: 'LOOKOUT_EMBEDDED_MONGODB_PORT',
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

/**
 * The URLs a CLI or an extra worker uses: the configured ones, else those
 * the `lookout start` running on the data folder recorded (so non-default
 * ports are said once), else the embedded default ports.
 */
export function storeUrls(config: Config): { redisUrl: string; mongoUrl: string } {
  const running = config.redisUrl && config.mongoUrl ? null : readInstance(config.dataDir);
  return {
    redisUrl: config.redisUrl ?? running?.redis_url ?? `redis://127.0.0.1:${config.embeddedRedisPort}`,
    mongoUrl: config.mongoUrl ?? running?.mongodb_url ?? `mongodb://127.0.0.1:${config.embeddedMongoPort}/`,
  };
}
