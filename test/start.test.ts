/**
 * `lookout start` with no store URL: it starts its own redis-server and
 * FerretDB in the data folder, serves the API, restarts a worker that dies,
 * and keeps data across a restart.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../src/embedded/process.ts';
import { execSync } from 'node:child_process';
import { runCli, startProcess } from './helpers/process.ts';
import { until } from './helpers/until.ts';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-start-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

describe('lookout start (embedded defaults)', () => {
  it('comes up on embedded stores, shuts down on SIGTERM and keeps data across restarts', async () => {
    const env = {
      LOOKOUT_DATA_DIR: dataDir,
      LOOKOUT_CACHE_DIR: path.resolve('.cache'),
      LOOKOUT_EMBEDDED_REDIS_PORT: String(await freePort()),
      LOOKOUT_EMBEDDED_MONGODB_PORT: String(await freePort()),
      PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
    };
    const first = startProcess(['start'], env, /API listening on (http:\/\/\S+)/);
    const api = (await first.matched)[1]!;
    expect(fs.existsSync(path.join(dataDir, 'redis', 'appendonlydir'))).toBe(true);

    const created = await runCli(['admin', 'org', 'create', '--name', 'Persisted'], env);
    expect(created.code).toBe(0);
    const project = JSON.parse((await runCli(['admin', 'project', 'create', '--org', JSON.parse(created.stdout).id, '--name', 'p'], env)).stdout);
    const activate = await fetch(`${api}/api/v1/sdk/activate`, {
      method: 'POST',
      headers: { 'x-service-key': project.secret_key, 'content-type': 'application/json' },
      body: JSON.stringify({ instance_id: 'inst-start-0001' }),
    });
    expect(activate.status).toBe(200);

    // a worker that dies is started again, and the API keeps serving meanwhile
    const workerPid = () => execSync(`pgrep -P ${first.child.pid} -f "lookout.mjs worker" || true`).toString().trim();
    const dead = workerPid();
    expect(dead).toMatch(/^\d+$/);
    process.kill(Number(dead), 'SIGKILL');
    await until(() => /worker process exited; restarting it/.test(first.output()));
    expect((await fetch(`${api}/healthz`)).status).toBe(200);
    await until(() => /^\d+$/.test(workerPid()) && workerPid() !== dead);
    expect(await first.stop()).toBe(0);
    expect(first.output()).not.toContain(project.secret_key);

    const second = startProcess(['start'], env, /API listening on (http:\/\/\S+)/);
    const api2 = (await second.matched)[1]!;
    const config = await fetch(`${api2}/api/v1/sdk/config`, {
      headers: { 'x-service-key': project.secret_key, 'x-service-instance': 'inst-start-0001' },
    });
    expect(config.status).toBe(200);
    expect((await config.json()).public_key).toBe(project.public_key);
    expect(await second.stop()).toBe(0);
  }, 120_000);
});
