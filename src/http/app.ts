/** The Koa application: middleware in order, then one router per resource. */
import { cronRoutes } from './routes/cron.route.ts';
import { pingRoutes } from './routes/ping.route.ts';
import type Router from '@koa/router';
import Koa from 'koa';
import { dashboardMiddleware } from './dashboard.ts';
import type { AppDeps, AppState } from './deps.ts';
import { webMiddleware } from './web.ts';
import { admissionMiddleware } from './middleware/admission.middleware.ts';
import { errorsMiddleware } from './middleware/errors.middleware.ts';
import { proxyMiddleware } from './middleware/proxy.middleware.ts';
import { httpMetricsMiddleware } from './middleware/metrics.middleware.ts';
import { requestLogMiddleware } from './middleware/request-log.middleware.ts';
import { dashboardSessionRoutes } from './routes/dashboard-session.route.ts';
import { dashboardRoutes } from './routes/dashboard.route.ts';
import { dashboardAccountRoutes } from './routes/dashboard-account.route.ts';
import { eventsRoutes } from './routes/events.route.ts';
import { healthRoutes } from './routes/health.route.ts';
import { metricsRoutes } from './routes/metrics.route.ts';
import { openapiRoutes } from './routes/openapi.route.ts';
import { ingestionRoutes } from './routes/ingestion.route.ts';
import { issuesRoutes } from './routes/issues.route.ts';
import { releasesRoutes } from './routes/releases.route.ts';
import { performanceRoutes } from './routes/performance.route.ts';
import { sdkRoutes } from './routes/sdk.route.ts';
import { sentryRoutes } from './routes/sentry.route.ts';
import { sentryToolsRoutes } from './routes/sentry-tools.route.ts';
import { sentryWebRoutes } from './routes/sentry-web.route.ts';
import { sessionsRoutes } from './routes/sessions.route.ts';
import { crowdsecRoutes } from './routes/crowdsec.route.ts';

/** Every router of the API, in the order they are mounted; the OpenAPI document is built from their contracts. */
export function makeRouters(deps: AppDeps): Router<AppState>[] {
  const routers = [
    healthRoutes(deps),
    metricsRoutes(deps),
    sdkRoutes(deps),
    eventsRoutes(deps),
    issuesRoutes(deps),
    sessionsRoutes(deps),
    sentryRoutes(deps),
    cronRoutes(deps),
    pingRoutes(deps),
    sentryToolsRoutes(deps),
    sentryWebRoutes(deps),
    ingestionRoutes(deps),
    releasesRoutes(deps),
    performanceRoutes(deps),
    dashboardSessionRoutes(deps),
    dashboardRoutes(deps),
    dashboardAccountRoutes(deps),
    crowdsecRoutes(deps),
  ];
  routers.push(openapiRoutes(deps, routers));
  return routers;
}

export function makeApp(deps: AppDeps): Koa<AppState> {
  // Behind trusted proxies (TRUST_PROXY) Koa reads X-Forwarded-Proto; the proxy middleware drops it from anyone else.
  const behindProxy = deps.config.trustProxy.length > 0;
  const app = new Koa<AppState>({ proxy: behindProxy });
  app.silent = true; // errors are logged by the errors middleware, with the request id
  if (behindProxy) app.use(proxyMiddleware(deps.config.trustProxy));
  app.use(requestLogMiddleware(deps.log));
  app.use(httpMetricsMiddleware(deps.metrics));
  app.use(errorsMiddleware());
  app.use(installationHeard(deps.installations));
  app.use(admissionMiddleware({ quota: deps.quota, resolver: deps.resolver, metrics: deps.metrics, turns: deps.turns }));
  app.use(dashboardMiddleware(deps.dashboard.queues, deps.dashboard.credential));
  app.use(webMiddleware(deps.accounts));
  for (const router of makeRouters(deps)) {
    app.use(router.routes());
    app.use(router.allowedMethods({ throw: false }));
  }
  return app;
}

/**
 * A request from a bound installation (its key and X-Service-Instance), answered without a refusal, is a sign of
 * life: recorded for the silence watch (src/services/installations.service.ts), a config poll apart from the rest.
 */
function installationHeard(installations: AppDeps['installations']): Koa.Middleware<AppState> {
  return async (ctx, next) => {
    await next();
    const instance = ctx.state.installation;
    if (!instance || ctx.status >= 400) return;
    const poll = ctx.method === 'GET' && ctx.path.replace(/\/+$/, '') === '/api/v1/sdk/config';
    await installations.heard(ctx.state.project._id, instance, poll ? 'poll' : 'ingest', Date.now(), poll ? ctx.get('user-agent') || null : null).catch((err: Error) => ctx.state.log.warn({ err: err.message }, 'could not record the installation heard'));
  };
}
