/**
 * `npm start`: embedded stores when their URLs are unset, the HTTP API in
 * this process and one worker process beside it, restarted if it dies. One
 * instance per data folder (src/embedded/instance.ts). SIGTERM/SIGINT, even
 * during start-up, stop the API (in-flight requests finish), then the
 * worker, then the stores.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Config } from '../config/index.ts';
import { assertPortFree, claimInstance, portTaken } from './embedded/instance.ts';
import { startStores, storeUrls, type StoreUrls } from './embedded/stores.ts';
import { startApi } from './http/server.ts';
import { makeLogger, type Logger } from './log.ts';
import type { Metrics } from './metrics/metrics.ts';
import { makeRuntime, type Runtime } from './runtime.ts';
import { onStopSignal } from './signals.ts';
import { ENTRY_ARGS } from './util/paths.ts';


export async function start(config: Config): Promise<void> {
  const log = makeLogger(config.logLevel, 'lookout');
  const say = (line: string) => process.stderr.write(`lookout: ${line}\n`);
  // One instance per data folder, claimed before any store is touched: a second start leaves the first alone.
  const instance = claimInstance(config.dataDir);
  const parts: { stores?: StoreUrls; runtime?: Runtime; api?: Api; worker?: Supervised } = {};
  let stopping = false;

  // A stop signal during start-up waits for the step under way, then undoes what was started.
  const startup = (async () => {
    await assertPortFree(config.host, config.port, 'PORT');
    parts.stores = await startStores(config, say);
    if (stopping) return;
    parts.runtime = await makeRuntime(config, parts.stores, log);
    if (stopping) return;
    parts.api = await startApi(parts.runtime, { host: config.host, port: config.port }).catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'EADDRINUSE' ? portTaken(config.host, config.port, 'PORT') : err;
    });
    if (stopping) return;
    parts.worker = superviseWorker({ ...parts.stores, cluster: config.redisCluster !== null }, log, parts.runtime.metrics, config.shutdownTimeoutMs, () => stopping);
  })();

  /** Undoes whatever start-up got to, in reverse order, and frees the data folder. */
  async function teardown() {
    await parts.api?.close();
    await parts.worker?.stop();
    await parts.runtime?.close().catch((err: Error) => log.warn({ err: err.message }, 'closing the store connections failed'));
    await parts.stores?.stop();
    instance.release();
  }

  onStopSignal(async (signal) => {
    stopping = true;
    log.info({ signal }, 'shutting down');
    await startup.catch(() => {});
    try {
      await teardown();
    } catch (err) {
      log.error({ err: (err as Error).message, stack: (err as Error).stack }, 'shutdown failed');
      process.exit(1);
    }
    process.exit(0);
  });

  try {
    await startup;
  } catch (err) {
    await teardown();
    throw err;
  }
  if (stopping) return;
  const { stores, runtime, api } = parts as Required<typeof parts>;
  instance.record({ api_url: api.url, redis_url: stores.redisUrl, mongodb_url: stores.mongoUrl });
  say(`API listening on ${api.url}`);
  say(`Redis ${stores.redisUrl}  MongoDB ${stores.mongoUrl}${config.mongoUrl ? '' : ' (FerretDB)'}  database ${config.mongoDb}`);
  const orgs = await runtime.admin.listOrgs();
  say(
    orgs.length === 0
      ? 'next: create an organisation and a project (npx lookout admin org create --name Acme; README "First requests")'
      : `${orgs.length} organisation(s); list them with npx lookout admin org list, their projects with npx lookout admin project list`,
  );
}

type Api = Awaited<ReturnType<typeof startApi>>;
type Supervised = ReturnType<typeof superviseWorker>;

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
function superviseWorker(
  stores: { redisUrl: string; mongoUrl: string; cluster: boolean },
  log: Logger,
  metrics: Metrics,
  shutdownTimeoutMs: number,
  stopping: () => boolean,
) {
  let child: ChildProcess;
  let delay = RESTART_FIRST_MS;
  let timer: NodeJS.Timeout | null = null;
  const run = () => {
    const startedAt = Date.now();
    // The worker reaches the same stores through explicit URLs. The IPC channel tells it when this process
    // is gone (even killed outright), so it never outlives the service.
    child = spawn(process.execPath, [...ENTRY_ARGS, 'worker'], {
      stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
      // (On a cluster it takes REDIS_CLUSTER_NODES from the environment it inherits.)
      env: { ...process.env, ...(stores.cluster ? {} : { REDIS_URL: stores.redisUrl }), MONGODB_URL: stores.mongoUrl },
    });
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
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      // The worker lets running jobs finish within the shutdown deadline; past it (and a margin) it is killed.
      const kill = setTimeout(() => child.kill('SIGKILL'), shutdownTimeoutMs + 5000);
      await exited;
      clearTimeout(kill);
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
