/**
 * The embedded Redis: a local redis-server with its data in the data folder,
 * append-only file on and `maxmemory-policy noeviction` (BullMQ needs it).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { isOwnStore, StartError } from './instance.ts';
import { spawnManaged, type ManagedProcess } from './process.ts';

export function findRedisServer(): string {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  if (found.status === 0 && found.stdout.trim()) return found.stdout.trim();
  if (process.getuid?.() === 0 && fs.existsSync('/usr/bin/apt-get')) {
    process.stderr.write('redis-server is missing: installing the Debian package redis-server\n');
    execFileSync('apt-get', ['update', '-q'], { stdio: 'inherit' });
    execFileSync('apt-get', ['install', '-y', '-q', 'redis-server'], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    return findRedisServer();
  }
  throw new StartError(
    'redis-server is not installed. Install it (Debian/Ubuntu: `sudo apt-get install redis-server`) ' +
      'or set REDIS_URL to a Redis 6.2+ server with maxmemory-policy noeviction.',
  );
}

export const redisPidFile = (dir: string) => path.resolve(dir, 'redis.pid');

/** Whether `pid` is a redis-server of this folder: redis-server works in its --dir. */
export function isOwnRedis(pid: number, dir: string): boolean {
  return isOwnStore(pid, findRedisServer(), path.resolve(dir));
}

/** Members up to which a set of integers (issue ids) is kept as a sorted array (Redis' default: 512). */
export const SET_MAX_INTSET_ENTRIES = 100_000;

export async function startRedis(opts: { dir: string; port: number; pidFile?: boolean; args?: string[] }): Promise<ManagedProcess> {
  const binary = findRedisServer();
  const dir = path.resolve(opts.dir);
  fs.mkdirSync(dir, { recursive: true });
  return spawnManaged({
    name: 'redis',
    command: binary,
    args: [
      '--port', String(opts.port),
      '--bind', '127.0.0.1',
      '--dir', dir,
      '--appendonly', 'yes',
      '--appendfsync', 'everysec',
      '--maxmemory-policy', 'noeviction',
      // the issue list's filter sets (ids) stay sorted arrays: a quarter of the memory, and searches that intersect
      // several of them at 20,000 issues take a third of the time (docs/tuning.md, "Redis")
      '--set-max-intset-entries', String(SET_MAX_INTSET_ENTRIES),
      '--save', '',
      '--daemonize', 'no',
      '--protected-mode', 'yes',
      ...(opts.args ?? []),
    ],
    port: opts.port,
    url: `redis://127.0.0.1:${opts.port}`,
    pidFile: opts.pidFile === false ? undefined : redisPidFile(dir),
    logFile: path.join(dir, 'redis.log'),
  });
}
