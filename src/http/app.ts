/** The Koa application: middleware in order, then one router per resource. */
import type Router from '@koa/router';
import type { Queue } from 'bullmq';
import Koa from 'koa';
import type { Config } from '../../config/index.ts';
import type { Envelope } from '../domain/envelope.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { HealthService } from '../services/health.service.ts';
import type { KeyResolver } from '../services/key-resolver.ts';
import type { AccountsService } from '../services/accounts.service.ts';
import type { ApiTokensService } from '../services/api-tokens.service.ts';
import type { SsoService } from '../services/sso.service.ts';
import type { NotifyService } from '../services/notify.service.ts';
import type { DecisionsService } from '../services/decisions.service.ts';
import type { AdminService } from '../services/admin.service.ts';
import type { EventsService } from '../services/events.service.ts';
import type { IssuesService } from '../services/issues.service.ts';
import type { ReleasesService } from '../services/releases.service.ts';
import type { SdkService } from '../services/sdk.service.ts';
import type { SessionsService } from '../services/sessions.service.ts';
import type { SentryService } from '../services/sentry.service.ts';
import type { IngestStats } from '../state/ingest-stats.ts';
import type { ProjectDoc } from '../store/projects.store.ts';
import { dashboardMiddleware, type AdminCredential } from './dashboard.ts';
import { webMiddleware } from './web.ts';
import { errorsMiddleware } from './middleware/errors.middleware.ts';
import { proxyMiddleware } from './middleware/proxy.middleware.ts';
import { httpMetricsMiddleware } from './middleware/metrics.middleware.ts';
import { requestLogMiddleware } from './middleware/request-log.middleware.ts';
import type { RateLimiter } from './middleware/rate-limit.middleware.ts';
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
import { sdkRoutes } from './routes/sdk.route.ts';
import { sentryRoutes } from './routes/sentry.route.ts';
import { sessionsRoutes } from './routes/sessions.route.ts';
import type { Validator } from '../validation/validator.ts';

export interface AppState {
  requestId: string;
  log: Logger;
  project: ProjectDoc;
  /** the Sentry endpoints: the parsed envelope, or the parsed JSON body (a store event, a CSP report), and the key */
  envelope?: Envelope;
  sentryBody?: { value: unknown; bytes: number };
  envelopeKey?: string;
}

export interface AppDeps {
  config: Config;
  log: Logger;
  validator: Validator;
  resolver: KeyResolver;
  sdk: SdkService;
  events: EventsService;
  issues: IssuesService;
  sessions: SessionsService;
  /** what Sentry's SDKs send: store bodies and envelopes */
  sentry: SentryService;
  /** each project's items accepted and dropped, by type and reason */
  ingestStats: IngestStats;
  releases: ReleasesService;
  /** dashboard users, their sign-in, sessions and second factor */
  accounts: AccountsService;
  /** API tokens: Bearer on the dashboard API */
  tokens: ApiTokensService;
  /** single sign-on through each organisation's OpenID provider */
  sso: SsoService;
  /** organisations, projects, keys, people and alerts: the web dashboard's and the admin CLI's one service */
  admin: AdminService;
  /** notification channels and their deliveries (the Alerts page, `lookout admin notify`) */
  notifications: NotifyService;
  /** decisions made by sign-in bursts: the SDK feed, the Alerts page, `lookout admin decisions` */
  decisions: DecisionsService;
  /** the sessions endpoints' rate limit, shared through Redis */
  rateLimit: RateLimiter;
  metrics: Metrics;
  /** the text of GET /metrics (src/metrics/fleet.ts) */
  scrape: { contentType: string; text(): Promise<string> };
  health: HealthService;
  /** set when SIGTERM arrives: /readyz answers 503 from then on */
  lifecycle: { stopping: boolean };
  /** the queues the dashboard shows, and who may see it (null: dashboard off) */
  dashboard: { queues: Queue[]; credential: AdminCredential | null };
}

/** Every router of the API, in the order they are mounted; the OpenAPI document is checked against it. */
export function makeRouters(deps: AppDeps): Router<AppState>[] {
  return [
    healthRoutes(deps),
    metricsRoutes(deps),
    sdkRoutes(deps),
    eventsRoutes(deps),
    issuesRoutes(deps),
    sessionsRoutes(deps),
    sentryRoutes(deps),
    ingestionRoutes(deps),
    releasesRoutes(deps),
    dashboardSessionRoutes(deps),
    dashboardRoutes(deps),
    dashboardAccountRoutes(deps),
    openapiRoutes(deps),
  ];
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
  app.use(dashboardMiddleware(deps.dashboard.queues, deps.dashboard.credential));
  app.use(webMiddleware(deps.accounts));
  for (const router of makeRouters(deps)) {
    app.use(router.routes());
    app.use(router.allowedMethods({ throw: false }));
  }
  return app;
}
