/**
 * Starts the HTTP API on a runtime. `close` is the graceful stop: /readyz
 * turns 503, the listener stops accepting, requests in flight finish
 * (idle keep-alive connections are closed as they fall idle), and whatever
 * is still open at SHUTDOWN_TIMEOUT_MS is cut.
 */
import http from 'node:http';
import { QUEUE_NAMES } from '../../config/index.ts';
import { makeFleetScrape, publishMetrics } from '../metrics/fleet.ts';
import type { Runtime } from '../runtime.ts';
import { makeHealthService } from '../services/health.service.ts';
import { rehearseIngest } from '../services/warm-up.ts';
import { makeAdmissionGate } from './admission-gate.ts';
import { makeApp } from './app.ts';
import type { AppDeps } from './deps.ts';
import { makeRateLimiter } from './middleware/rate-limit.middleware.ts';
import { makeLoadSampler, type LoadSampler } from './admission-load.ts';
import { makeTurns, type Turns } from '../util/turns.ts';

/** This process' load and its stores' room, as admission reads them. */
export function makeApiLoad(runtime: Runtime, turns: Turns): LoadSampler {
  const ingestQueues = [runtime.queues.queue('events'), runtime.queues.queue('sessions')];
  const writes = [runtime.events.waiting, runtime.sessions.waiting];
  return makeLoadSampler(
    {
      waiting: [turns.waiting, ...writes],
      writes,
      queueDepth: async () => (await Promise.all(ingestQueues.map((q) => q.getWaitingCount()))).reduce((a, b) => a + b, 0),
      redis: runtime.queues.connection,
      dataDir: runtime.config.dataDir,
    },
    runtime.config.admission,
    ({ delayMs, shedding, inFlight }) => {
      runtime.metrics.admissionDelay.set(delayMs / 1000);
      runtime.metrics.admissionShedding.set(shedding ? 1 : 0);
      runtime.metrics.ingestInFlight.set(inFlight);
    },
  );
}

/** What the app needs from a runtime; `processId` names this process in the fleet metrics. */
export function makeApiDeps(runtime: Runtime, processId: string, lifecycle = { stopping: false }, turns: Turns = makeTurns()): AppDeps {
  const { config, metrics } = runtime;
  return {
    config,
    log: runtime.log,
    validator: runtime.validator,
    resolver: runtime.resolver,
    sdk: runtime.sdk,
    events: runtime.events,
    issues: runtime.issues,
    sessions: runtime.sessions,
    sentry: runtime.sentry,
    checkIns: runtime.checkIns,
    ingestStats: runtime.ingestStats,
    performance: runtime.performance,
    releases: runtime.releases,
    accounts: runtime.accounts,
    tokens: runtime.tokens,
    sso: runtime.sso,
    admin: runtime.admin,
    notifications: runtime.notifications,
    monitorsAdmin: runtime.monitorsAdmin,
    installations: runtime.installations,
    probes: runtime.probes,
    decisions: runtime.decisions,
    bouncers: runtime.bouncers,
    sourcemaps: runtime.sourcemaps,
    sentryApi: runtime.sentryApi,
    rateLimit: makeRateLimiter({
      redis: runtime.queues.connection,
      prefix: config.queuePrefix,
      perMinute: config.sessionsRateLimit,
      onRefused: (route) => metrics.rateLimited.inc({ route }),
    }),
    quotas: runtime.quotas,
    quota: runtime.quota,
    turns,
    metrics,
    scrape: makeFleetScrape(runtime, processId),
    health: makeHealthService({ redis: runtime.queues.connection, db: runtime.mongo.db }),
    lifecycle,
    dashboard: { queues: QUEUE_NAMES.map((q) => runtime.queues.queue(q)), credential: config.admin },
  };
}

export async function startApi(runtime: Runtime, listen: { host: string; port: number }) {
  const { config } = runtime;
  const lifecycle = { stopping: false };
  const publisher = publishMetrics(runtime, 'api');
  // Admin changes anywhere drop this process' cached key lookups at once (src/state/project-changes.ts).
  // A project that gained a bouncer has this process prepare its bouncers' startup list, as every project with
  // bouncers has at start (src/services/bouncer-startup.ts).
  const unsubscribe = runtime.changes.subscribe((project) => {
    runtime.resolver.forget();
    runtime.bouncers.forget();
    if (project !== null) runtime.bouncers.prepare([project]);
  });
  runtime.bouncers.prepare();
  const turns = makeTurns();
  const load = makeApiLoad(runtime, turns);
  const app = makeApp(makeApiDeps(runtime, publisher.id, lifecycle, turns));
  const gate = makeAdmissionGate({ load, resolver: runtime.resolver, stats: runtime.ingestStats, metrics: runtime.metrics, log: runtime.log });
  const handle = app.callback();
  // so a fresh process takes its first burst nearer what a later one costs (src/services/warm-up.ts)
  const rehearsal = rehearseIngest(runtime, config.ingestRehearsals);
  if (rehearsal.error) runtime.log.warn({ err: rehearsal.error }, 'the rehearsal of taking events failed; the API starts without it');
  else runtime.log.info({ ms: Math.round(rehearsal.ms), rounds: config.ingestRehearsals }, 'taking events rehearsed');
  // what this process cannot take now is refused before Koa (src/http/admission-gate.ts)
  const server = http.createServer((req, res) => {
    if (!gate.refused(req, res)) void handle(req, res);
  });
  server.keepAliveTimeout = 65_000;
  // A storm's connections wait in the kernel's backlog, not refused by it, and are answered (or refused) in turn.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: listen.port, host: listen.host, backlog: config.listenBacklog }, () => resolve());
  });
  // the minutes an API process was up to hear check-ins: the monitors' clock fails no run in a minute none was
  const heard = () => void runtime.monitorsState.heard(Date.now()).catch(() => {});
  heard();
  const hearing = setInterval(heard, 20_000);
  const address = server.address() as { address: string; port: number };
  return {
    url: `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`,
    port: address.port,
    close: async (timeoutMs = config.shutdownTimeoutMs) => {
      lifecycle.stopping = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const idle = setInterval(() => server.closeIdleConnections(), 50);
      server.closeIdleConnections();
      const cut = setTimeout(() => server.closeAllConnections(), timeoutMs);
      await closed;
      clearInterval(idle);
      clearInterval(hearing);
      clearTimeout(cut);
      unsubscribe();
      load.close();
      await gate.close();
      await runtime.bouncers.settle();
      await publisher.stop();
    },
  };
}
