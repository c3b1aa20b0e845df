/**
 * `npm start`: embedded stores when their URLs are unset, the HTTP API in
 * this process and one worker process beside it, restarted if it dies.
 * SIGTERM/SIGINT stop the API (in-flight requests finish), then the worker,
 * then the stores.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/index.ts';
import { startStores, storeUrls } from './embedded/stores.ts';
import { startApi } from './http/server.ts';
import { makeLogger, type Logger } from './log.ts';
import type { Metrics } from './metrics/metrics.ts';
import { makeRuntime } from './runtime.ts';
import { onStopSignal } from './signals.ts';

const BIN = fileURLToPath(new URL('../bin/lookout.mjs', import.meta.url));

export async function start(config: Config): Promise<void> {
  const log = makeLogger(config.logLevel, 'lookout');
  const say = (line: string) => process.stderr.write(`lookout: ${line}\n`);
  const stores = await startStores(config, say);
  const runtime = await makeRuntime(config, stores, log);
  const api = await startApi(runtime, { host: config.host, port: config.port });

  let stopping = false;
  const worker = superviseWorker(stores, log, runtime.metrics, () => stopping);

  say(`API listening on ${api.url}`);
  say(`Redis ${stores.redisUrl}  MongoDB ${stores.mongoUrl}${config.mongoUrl ? '' : ' (FerretDB)'}  database ${config.mongoDb}`);
  say('create an organisation and project: npx lookout admin org create --name Acme');

  async function stop(signal: string) {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    await api.close();
    await worker.stop();
    await runtime.close();
    await stores.stop();
    process.exit(0);
  }
  onStopSignal(stop);
}

/** Restart delays of a dead worker: doubling from 1 s up to 30 s, back to 1 s after a minute of running. */
const RESTART_FIRST_MS = 1000;
const RESTART_MAX_MS = 30_000;
const RESTART_RESET_AFTER_MS = 60_000;

/**
 * The worker process beside the API. If it dies the API keeps serving (what
 * it accepts waits on the backlog) and the worker is started again, with a
 * log line and `lookout_worker_restarts_total`; only SIGTERM/SIGINT stop
 * the service.
 */
function superviseWorker(stores: { redisUrl: string; mongoUrl: string }, log: Logger, metrics: Metrics, stopping: () => boolean) {
  let child: ChildProcess;
  let delay = RESTART_FIRST_MS;
  let timer: NodeJS.Timeout | null = null;
  const run = () => {
    const startedAt = Date.now();
    // The worker reaches the same stores through explicit URLs.
    child = spawn(process.execPath, [BIN, 'worker'], { stdio: 'inherit', env: { ...process.env, REDIS_URL: stores.redisUrl, MONGODB_URL: stores.mongoUrl } });
    child.on('exit', (code, signal) => {
      if (stopping()) return;
      if (Date.now() - startedAt > RESTART_RESET_AFTER_MS) delay = RESTART_FIRST_MS;
      metrics.workerRestarts.inc();
      log.warn({ code, signal, restart_in_ms: delay }, 'worker process exited; restarting it (the API keeps serving)');
      timer = setTimeout(run, delay);
      delay = Math.min(delay * 2, RESTART_MAX_MS);
    });
  };
  run();
  return {
    async stop() {
      if (timer) clearTimeout(timer);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
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
