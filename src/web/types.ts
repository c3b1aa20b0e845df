/**
 * The shapes the dashboard API answers with: the answers' schemas (schemas/answers/), as `npm run contracts`
 * generates their types for the server and the dashboard alike.
 */
export type {
  Account,
  Alerts,
  AlertsPreview,
  AttemptSummary,
  Bouncer,
  Channel,
  Decision,
  Delivery,
  HourPoint,
  Ingestion as IngestCounts,
  Issue,
  IssueDetail,
  IssueDecisions,
  IssueEvent,
  IssueEventSummary,
  IssueList,
  IssueActivity,
  ActivityEntry,
  IssueRow,
  LogList,
  PerformanceGroup,
  PerformanceList,
  Trace,
  VitalsList,
  InstallationWatch,
  Monitor,
  Probe,
  OrganisationPage,
  OrgSso,
  Project,
  ProjectsHealth,
  Release,
  ReleaseDeploys,
  ReleaseIssues,
  SignedIn,
  SourcemapBundles,
  StatusCounts,
  TokenList,
  UserFeedback,
  WebSessions,
} from '../generated/schema-types.ts';

import type { IssueDecisions } from '../generated/schema-types.ts';
import type { Monitor } from '../generated/schema-types.ts';
/** One run of a monitor, as its page lists them. */
export type MonitorRun = NonNullable<Monitor['environments'][number]['runs']>[number];
/** One decision of a security issue's history. */
export type IssueDecision = IssueDecisions['decisions'][number];
