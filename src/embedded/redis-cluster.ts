/**
 * A Redis Cluster on loopback for the tests and `bench:pipeline --redis-cluster`:
 * six `redis-server --cluster-enabled yes` processes (each as the embedded
 * Redis runs: AOF, noeviction) joined by `redis-cli --cluster create` into
 * three primaries with one replica each. A short node timeout lets a replica
 * take over a killed primary within a few seconds.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort, type ManagedProcess } from './process.ts';
import { startRedis } from './redis.ts';

const run = promisify(execFile);
/** How long a primary may be unreachable before its replica takes over (cluster-node-timeout). */
export const CLUSTER_NODE_TIMEOUT_MS = 2000;

export interface LocalCluster {
  /** Every node, as REDIS_CLUSTER_NODES takes them. */
  nodes: { host: string; port: number }[];
  /** `host:port,...` for REDIS_CLUSTER_NODES */
  env: string;
  /** The node serving a key's slot now. */
  primaryOf(key: string): Promise<number>;
  /** The ports of the primaries now. */
  primaries(): Promise<number[]>;
  /** SIGKILLs the node on `port` (left down). */
  kill(port: number): void;
  /**
   * Resolves when every slot is served (after a kill: when a replica took over) and, with `replicas`, each
   * primary has a replica in sync, so that it can take over.
   */
  settled(timeoutMs?: number, opts?: { replicas?: boolean }): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedisCluster(opts: { dir: string; nodes?: number }): Promise<LocalCluster> {
  const count = opts.nodes ?? 6;
  const ports: number[] = [];
  while (ports.length < count) {
    const port = await freePort();
    // a cluster node also listens on port + 10000 (the cluster bus)
    if (!ports.includes(port) && port + 10000 < 65536) ports.push(port);
  }
  const procs = new Map<number, ManagedProcess & { kill(): void }>();
  const stop = async () => {
    await Promise.all([...procs.values()].map((p) => p.stop()));
  };
  try {
    await Promise.all(
      ports.map(async (port) => {
        const proc = await startRedis({
          dir: path.join(opts.dir, `node-${port}`),
          port,
          pidFile: false,
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', String(CLUSTER_NODE_TIMEOUT_MS)],
        });
        procs.set(port, { ...proc, kill: () => process.kill(proc.pid, 'SIGKILL') });
      }),
    );
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes']);
  } catch (err) {
    await stop();
    throw err;
  }
  const alive = new Set(ports);
  /** One command to the node on `port`, on a connection of its own that does not retry. */
  const call = async (port: number, ...args: string[]): Promise<unknown> => {
    const r = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1000, retryStrategy: () => null });
    try {
      await r.connect();
      return await r.call(args[0]!, ...args.slice(1));
    } finally {
      r.disconnect();
    }
  };
  /** One command to the first live node that answers. */
  const ask = async (...args: string[]): Promise<unknown> => {
    let last: unknown;
    for (const port of alive) {
      try {
        return await call(port, ...args);
      } catch (err) {
        last = err;
      }
    }
    throw last;
  };
  /** The slot ranges with the port of the primary serving each and those of its replicas. */
  const ranges = async () =>
    ((await ask('CLUSTER', 'SLOTS')) as [number, number, ...[string, number][]][]).map(([from, to, ...nodes]) => ({ from, to, port: nodes[0]![1], replicas: nodes.slice(1).map(([, p]) => p) }));
  /** Whether the node on `port`, a replica, has its primary's data streaming in. */
  const inSync = async (port: number) => /master_link_status:up/.test(String(await call(port, 'INFO', 'replication').catch(() => '')));
  const cluster: LocalCluster = {
    nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
    env: ports.map((p) => `127.0.0.1:${p}`).join(','),
    async primaryOf(key) {
      const slot = Number(await ask('CLUSTER', 'KEYSLOT', key));
      return (await ranges()).find((g) => g.from <= slot && slot <= g.to)!.port;
    },
    async primaries() {
      return [...new Set((await ranges()).map((g) => g.port))].sort((a, b) => a - b);
    },
    kill(port) {
      procs.get(port)!.kill();
      alive.delete(port);
    },
    async settled(timeoutMs = 30_000, opts = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const ok = await Promise.all([...alive].map(async (port) => /cluster_state:ok/.test(String(await call(port, 'CLUSTER', 'INFO').catch(() => '')))));
        const served = await ranges().catch(() => []);
        const covered = served.reduce((n, g) => n + (alive.has(g.port) ? g.to - g.from + 1 : 0), 0);
        const replicated = !opts.replicas || (await Promise.all(served.map(async (g) => g.replicas.length > 0 && (await Promise.all(g.replicas.map(inSync))).every(Boolean)))).every(Boolean);
        if (ok.every(Boolean) && covered === 16384 && replicated) return;
        if (Date.now() > deadline) throw new Error(`the cluster did not settle within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    stop,
  };
  await cluster.settled(30_000, { replicas: true });
  return cluster;
}
