/**
 * Every Redis connection Lookout opens (the queues, the hot state, the rate
 * limiter, pub/sub, the fleet's metrics) is made here: to one server
 * (REDIS_URL, or the embedded one) or, with REDIS_CLUSTER_NODES, to a Redis
 * Cluster through ioredis' cluster client, which routes each command to the
 * primary of its key's slot and follows the cluster through a failover.
 * docs/scaling.md says which keys share a slot.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';

export type RedisClient = Redis | Cluster;

/** Where Redis is: `url` for one server; `cluster` (startup nodes) for a cluster, whose clients ignore `url`. */
export interface RedisTarget {
  url: string;
  cluster: readonly { host: string; port: number }[] | null;
}

/**
 * A connection with the given options (for a cluster, the options of each
 * node's connection). While a slot has no primary (a failover takes the
 * cluster's node timeout and an election, a few seconds) its commands are
 * retried for a while and then fail like commands to a server that is away;
 * callers already handle that (jobs retry, the API leaves work to the sweeper).
 */
export function connectRedis(target: RedisTarget, options: RedisOptions): RedisClient {
  if (!target.cluster) return new Redis(target.url, options);
  return new Cluster(
    [...target.cluster],
    {
      redisOptions: options,
      enableOfflineQueue: options.enableOfflineQueue ?? true,
      enableReadyCheck: true,
      retryDelayOnFailover: 200,
      retryDelayOnClusterDown: 200,
      slotsRefreshTimeout: 2000,
    },
  );
}

/** Whether the client speaks to a cluster. */
export const isCluster = (redis: RedisClient): redis is Cluster => redis instanceof Cluster;

/** The primaries of a cluster, or the one server: where a scan of keys must look. */
export function primaries(redis: RedisClient): Redis[] {
  return isCluster(redis) ? redis.nodes('master') : [redis];
}

/**
 * Whether an error says Redis (or the slot's primary on a cluster) could not be reached in time, rather than
 * that a command was wrong: the API answers those 503 with a retry hint, like a database that is away.
 */
export function isRedisUnavailable(err: unknown): boolean {
  const { name, message } = (err ?? {}) as { name?: string; message?: string };
  return (
    ['MaxRetriesPerRequestError', 'ClusterAllFailedError', 'ReplicaLagError'].includes(name ?? '') ||
    /Too many Cluster redirections|CLUSTERDOWN|TRYAGAIN|Connection is closed|isn't ready|Stream isn't writeable/.test(message ?? '')
  );
}
