/** Starts the HTTP API on a runtime; `close` stops accepting and waits for in-flight requests. */
import http from 'node:http';
import type { Runtime } from '../runtime.ts';
import { makeApp } from './app.ts';
import { makeRateLimiter } from './middleware/rate-limit.middleware.ts';

export async function startApi(runtime: Runtime, listen: { host: string; port: number }) {
  const app = makeApp({
    config: runtime.config,
    log: runtime.log,
    validator: runtime.validator,
    resolver: runtime.resolver,
    sdk: runtime.sdk,
    events: runtime.events,
    issues: runtime.issues,
    sessions: runtime.sessions,
    releases: runtime.releases,
    rateLimit: makeRateLimiter({ redis: runtime.queues.connection, prefix: runtime.config.queuePrefix, perMinute: runtime.config.sessionsRateLimit }),
  });
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  const address = server.address() as { address: string; port: number };
  return {
    url: `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
