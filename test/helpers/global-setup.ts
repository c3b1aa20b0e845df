/**
 * Starts one private redis-server and one FerretDB for the whole run, on
 * free ports and in a temporary folder; each test file then uses its own
 * database and queue prefix (see context.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../config/index.ts';
import { startFerret } from '../../src/embedded/ferretdb.ts';
import { freePort } from '../../src/embedded/process.ts';
import { startRedis } from '../../src/embedded/redis.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    mongoUrl: string;
    redisDir: string;
    redisPort: number;
  }
}

export default async function setup(project: TestProject) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-test-'));
  const config = loadConfig({});
  const redisPort = await freePort();
  const redisDir = path.join(dir, 'redis');
  const redis = await startRedis({ dir: redisDir, port: redisPort, pidFile: false });
  const ferret = await startFerret({
    dir: path.join(dir, 'ferretdb'),
    port: await freePort(),
    cacheDir: config.cacheDir,
    pidFile: false,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  project.provide('redisUrl', redis.url);
  project.provide('mongoUrl', ferret.url);
  project.provide('redisDir', redisDir);
  project.provide('redisPort', redisPort);
  return async () => {
    await Promise.all([redis.stop(), ferret.stop()]);
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
