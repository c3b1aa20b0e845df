/**
 * `npm start`: embedded stores when their URLs are unset, the HTTP API in
 * this process and one worker process beside it. SIGTERM/SIGINT stop the
 * API (in-flight requests finish), then the worker, then the stores.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/index.ts';
import { startStores, storeUrls } from './embedded/stores.ts';
import { startApi } from './http/server.ts';
import { makeLogger } from './log.ts';
import { makeRuntime } from './runtime.ts';
import { onStopSignal } from './signals.ts';

const BIN = fileURLToPath(new URL('../bin/lookout.mjs', import.meta.url));

export async function start(config: Config): Promise<void> {
  const log = makeLogger(config.logLevel, 'lookout');
  const say = (line: string) => process.stderr.write(`lookout: ${line}\n`);
  const stores = await startStores(config, say);
  const runtime = await makeRuntime(config, stores, log);
  const api = await startApi(runtime, { host: config.host, port: config.port });

  // The worker reaches the same stores through explicit URLs.
  const worker = spawn(process.execPath, [BIN, 'worker'], {
    stdio: 'inherit',
    env: { ...process.env, REDIS_URL: stores.redisUrl, MONGODB_URL: stores.mongoUrl },
  });
  let stopping = false;
  worker.on('exit', (code, signal) => {
    if (!stopping) {
      log.error({ code, signal }, 'worker process exited; stopping');
      void stop('worker-exit');
    }
  });

  say(`API listening on ${api.url}`);
  say(`Redis ${stores.redisUrl}  MongoDB ${stores.mongoUrl}${config.mongoUrl ? '' : ' (FerretDB)'}  database ${config.mongoDb}`);
  say('create an organisation and project: npx lookout admin org create --name Acme');

  async function stop(signal: string) {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    await api.close();
    if (worker.exitCode === null) {
      worker.kill('SIGTERM');
      await new Promise((r) => worker.once('exit', r));
    }
    await runtime.close();
    await stores.stop();
    process.exit(signal === 'worker-exit' ? 1 : 0);
  }
  onStopSignal(stop);
}

/**
 * `lookout api`: the HTTP API alone, on stores given by REDIS_URL and
 * MONGODB_URL (or the embedded ones `lookout start` runs). Stateless: run as
 * many behind a load balancer as needed. SIGTERM stops accepting, lets
 * in-flight requests finish, then exits.
 */
export async function startApiOnly(config: Config): Promise<void> {
  const log = makeLogger(config.logLevel, 'api');
  const runtime = await makeRuntime(config, storeUrls(config), log);
  const api = await startApi(runtime, { host: config.host, port: config.port });
  process.stderr.write(`lookout: API listening on ${api.url}\n`);
  const stop = async (signal: string) => {
    log.info({ signal }, 'API shutting down');
    await api.close();
    await runtime.close();
    process.exit(0);
  };
  onStopSignal(stop);
}
