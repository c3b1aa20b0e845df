/**
 * The shapes the dashboard API answers with: the answers' schemas (schemas/answers/), as `npm run contracts`
 * generates their types for the server and the dashboard alike.
 */
export type {
  Alerts,
  AttemptSummary,
  Channel,
  Decision,
  Delivery,
  HourPoint,
  Ingestion as IngestCounts,
  Issue,
  IssueDetail,
  IssueEvent,
  IssueEventSummary,
  IssueRow,
  Project,
  Release,
  StatusCounts,
  UserFeedback,
} from '../validation/schema-types.ts';
