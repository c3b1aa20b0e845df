/** Everything the routes and middleware are given: config, services and the stores' views (src/runtime.ts builds them). */
import type { SentryApiService } from '../services/sentry-api.service.ts';
import type { CheckInsService } from '../services/checkins.service.ts';
import type { Queue } from 'bullmq';
import type { Config } from '../../config/index.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { AccountsService } from '../services/accounts.service.ts';
import type { AdminService } from '../services/admin.service.ts';
import type { ApiTokensService } from '../services/api-tokens.service.ts';
import type { DecisionsService } from '../services/decisions.service.ts';
import type { BouncersService } from '../services/bouncers.service.ts';
import type { EventsService } from '../services/events.service.ts';
import type { HealthService } from '../services/health.service.ts';
import type { IssuesService } from '../services/issues.service.ts';
import type { KeyResolver } from './key-resolver.ts';
import type { NotifyService } from '../notify/channels.service.ts';
import type { MonitorsAdmin } from '../services/monitors-admin.service.ts';
import type { InstallationsService } from '../services/installations.service.ts';
import type { ProbesService } from '../services/probes.service.ts';
import type { ReleasesService } from '../services/releases.service.ts';
import type { SdkService } from '../services/sdk.service.ts';
import type { SentryService } from '../services/sentry.service.ts';
import type { SourcemapsService } from '../services/sourcemaps.service.ts';
import type { SessionsService } from '../services/sessions.service.ts';
import type { SsoService } from '../services/sso.service.ts';
import type { IngestStats } from '../state/ingest-stats.ts';
import type { QuotaCounter } from '../state/quotas.ts';
import type { QuotaService } from '../services/quota.service.ts';
import type { Turns } from '../util/turns.ts';
import type { Validator } from '../validation/validator.ts';
import type { PerformanceService } from '../services/performance.service.ts';
import type { AdminCredential } from './dashboard.ts';
import type { RateLimiter } from './middleware/rate-limit.middleware.ts';

export type { AppState } from './state.ts';

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
  /** cron monitors' check-ins (src/http/routes/cron.route.ts) */
  checkIns: CheckInsService;
  /** each project's items accepted and dropped, by type and reason */
  ingestStats: IngestStats;
  /** transactions, web vitals, traces and log lines as the pages read them (issue 69) */
  performance: PerformanceService;
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
  /** cron monitors as people manage them (the Monitors page, `lookout admin monitor`) */
  monitorsAdmin: MonitorsAdmin;
  /** when each project's bound installation was last heard from (src/services/installations.service.ts) */
  installations: InstallationsService;
  /** uptime probes (the Monitors page, `lookout admin probe`) */
  probes: ProbesService;
  /** decisions made by sign-in bursts: the SDK feed, the Alerts page, `lookout admin decisions` */
  decisions: DecisionsService;
  /** CrowdSec bouncers: their keys and the decisions stream they pull */
  bouncers: BouncersService;
  /** source map bundles and releases uploaded by sentry-cli */
  sourcemaps: SourcemapsService;
  /** Sentry's web API for tools (sentry-cli, Sentry's MCP server), read from Lookout's own */
  sentryApi: SentryApiService;
  /** the sessions endpoints' rate limit, shared through Redis */
  rateLimit: RateLimiter;
  /** each project's quotas and spike protection: the counts (a spike's state) */
  quotas: QuotaCounter;
  /** where a quota refuses (src/services/quota.service.ts) */
  quota: QuotaService;
  /** the thread's turns, which an ingest request's work waits for once its body is read (src/util/turns.ts) */
  turns: Turns;
  metrics: Metrics;
  /** the text of GET /metrics (src/metrics/fleet.ts) */
  scrape: { contentType: string; text(): Promise<string> };
  health: HealthService;
  /** set when SIGTERM arrives: /readyz answers 503 from then on */
  lifecycle: { stopping: boolean };
  /** the queues the dashboard shows, and who may see it (null: dashboard off) */
  dashboard: { queues: Queue[]; credential: AdminCredential | null };
}
