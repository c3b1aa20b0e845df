/**
 * Resolves the Redis and MongoDB URLs: the configured ones, or embedded
 * servers started in the data folder when a URL is unset. `lookout start`
 * has claimed the folder first (src/embedded/instance.ts), so whatever its
 * PID files name is a leftover of an earlier run, never a live instance.
 */
import path from 'node:path';
import type { Config } from '../../config/index.ts';
import { ensureFerretBinary, ferretPidFile, isOwnFerret, startFerret } from './ferretdb.ts';
import { assertPortFree, readInstance } from './instance.ts';
import { stopStale, type ManagedProcess } from './process.ts';
import { isOwnRedis, redisPidFile, startRedis } from './redis.ts';

export interface StoreUrls {
  redisUrl: string;
  mongoUrl: string;
  stop(): Promise<void>;
}

export async function startStores(config: Config, log: (line: string) => void): Promise<StoreUrls> {
  const redisDir = path.join(config.dataDir, 'redis');
  const ferretDir = path.join(config.dataDir, 'ferretdb');
  // A first run builds FerretDB; done before any store runs, nothing is left behind if it fails or is interrupted.
  const ferretBinary = config.mongoUrl === null ? ensureFerretBinary(config.cacheDir, log) : '';

  // Before anything starts: stores a crashed run left behind are stopped, but only when they are this
  // folder's own; then every port is checked, so a taken one fails the start with nothing running.
  const embedded = [
    ...(config.redisUrl === null && config.redisCluster === null
      ? [{ pidFile: redisPidFile(redisDir), isOwn: (pid: number) => isOwnRedis(pid, redisDir), port: config.embeddedRedisPort, variable: 'LOOKOUT_EMBEDDED_REDIS_PORT' }]
      : []),
    ...(config.mongoUrl === null
      ? [{ pidFile: ferretPidFile(ferretDir), isOwn: (pid: number) => isOwnFerret(pid, ferretDir, ferretBinary), port: config.embeddedMongoPort, variable: 'LOOKOUT_EMBEDDED_MONGODB_PORT' }]
      : []),
  ];
  for (const store of embedded) await stopStale(store.pidFile, store.isOwn);
  for (const store of embedded) await assertPortFree('127.0.0.1', store.port, store.variable);

  const started: ManagedProcess[] = [];
  const stop = async () => {
    await Promise.all(started.map((p) => p.stop()));
  };
  try {
    let redisUrl = configuredRedisUrl(config);
    if (redisUrl === null) {
      const redis = await startRedis({ dir: redisDir, port: config.embeddedRedisPort });
      started.push(redis);
      redisUrl = redis.url;
      log(`embedded redis-server on ${redisUrl} (data in ${redisDir})`);
    }
    let mongoUrl = config.mongoUrl;
    if (mongoUrl === null) {
      const ferret = await startFerret({ dir: ferretDir, port: config.embeddedMongoPort, cacheDir: config.cacheDir, log });
      started.push(ferret);
      mongoUrl = ferret.url;
      log(`embedded FerretDB on ${mongoUrl} (data in ${ferretDir})`);
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
  const redisUrl = configuredRedisUrl(config);
  const running = redisUrl && config.mongoUrl ? null : readInstance(config.dataDir);
  return {
    redisUrl: redisUrl ?? running?.redis_url ?? `redis://127.0.0.1:${config.embeddedRedisPort}`,
    mongoUrl: config.mongoUrl ?? running?.mongodb_url ?? `mongodb://127.0.0.1:${config.embeddedMongoPort}/`,
  };
}

/**
 * REDIS_URL, or on a cluster (REDIS_CLUSTER_NODES) the URL of its first startup node (what logs and messages name;
 * clients take every node); null when neither is set.
 */
function configuredRedisUrl(config: Config): string | null {
  const first = config.redisCluster?.[0];
  if (config.redisUrl || !first) return config.redisUrl;
  return `redis://${first.host.includes(':') ? `[${first.host}]` : first.host}:${first.port}`;
}
