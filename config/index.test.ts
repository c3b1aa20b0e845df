import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './index.ts';

describe('loadConfig', () => {
  it('uses the documented defaults when nothing is set', () => {
    const config = loadConfig({}, '/srv/lookout');
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 3000,
      redisUrl: null,
      mongoUrl: null,
      mongoDb: 'lookout',
      dataDir: '/srv/lookout/.data',
      concurrency: { sessions: 1, events: 4, maintenance: 1 },
      admin: null,
      storeTraceDir: null,
    });
    expect(loadConfig({ STORE_TRACE_DIR: 'trace' }, '/srv/lookout').storeTraceDir).toBe('/srv/lookout/trace');
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.concurrency)).toBe(true);
  });

  it('names every bad variable in one error', () => {
    try {
      loadConfig({ PORT: 'eighty', REDIS_URL: 'http://x', MONGODB_URL: '::nope', LOG_LEVEL: 'loud', WORKER_CONCURRENCY_EVENTS: '0', WORKER_NICE: '20' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join('\n');
      for (const name of ['PORT', 'REDIS_URL', 'MONGODB_URL', 'LOG_LEVEL', 'WORKER_CONCURRENCY_EVENTS', 'WORKER_NICE']) {
        expect(problems).toContain(name);
      }
    }
  });

  it('takes TRUST_PROXY as addresses and CIDR ranges, and names a bad one', () => {
    expect(loadConfig({}).trustProxy).toEqual([]);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.5, 10.1.0.0/16,fd00::/8' }).trustProxy).toEqual(['10.0.0.5', '10.1.0.0/16', 'fd00::/8']);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.5, proxy.internal' })).toThrow(/TRUST_PROXY: "proxy.internal"/);
  });

  it('turns the dashboard on only with a password of 12+ characters', () => {
    expect(loadConfig({ ADMIN_PASSWORD: 'a-long-password' }).admin).toEqual({ username: 'admin', password: 'a-long-password' });
    expect(loadConfig({ ADMIN_USERNAME: 'ops', ADMIN_PASSWORD: 'a-long-password' }).admin?.username).toBe('ops');
    expect(() => loadConfig({ ADMIN_PASSWORD: 'short' })).toThrow(/ADMIN_PASSWORD/);
    expect(() => loadConfig({ ADMIN_USERNAME: 'a:b', ADMIN_PASSWORD: 'a-long-password' })).toThrow(/ADMIN_USERNAME/);
  });

  it('takes the URLs when set', () => {
    const config = loadConfig({ REDIS_URL: 'redis://r:6379', MONGODB_URL: 'mongodb://m:27017/?replicaSet=rs0' });
    expect(config.redisUrl).toBe('redis://r:6379');
    expect(config.mongoUrl).toBe('mongodb://m:27017/?replicaSet=rs0');
  });

  it('takes a Redis Cluster instead of one server, its queue prefix a hash tag', () => {
    const config = loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-b:7001,[::1]:7002' });
    expect(config.redisCluster).toEqual([{ host: '10.0.0.1', port: 7000 }, { host: 'redis-b', port: 7001 }, { host: '::1', port: 7002 }]);
    expect(config.queuePrefix).toBe('{lookout}');
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'a:1', QUEUE_PREFIX: '{shop}:lookout' }).queuePrefix).toBe('{shop}:lookout');
    expect(loadConfig({}).redisCluster).toBeNull();
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'a:1', REDIS_URL: 'redis://r:6379' })).toThrow(/REDIS_URL and REDIS_CLUSTER_NODES/);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'a:1', QUEUE_PREFIX: 'lookout' })).toThrow(/QUEUE_PREFIX.*REDIS_CLUSTER_NODES/);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'a:1,b' })).toThrow(/REDIS_CLUSTER_NODES: "b" is not host:port/);
  });
});
