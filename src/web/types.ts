/** The shapes the dashboard API answers with (src/services/*: projectView, issueView, the releases service). */
export interface Alerts {
  threshold: number;
  window_seconds: number;
  cooldown_seconds: number;
  stuffing_threshold: number;
  decision_seconds: number;
}

/** A decision made by a sign-in burst (src/services/decisions.service.ts decisionView). */
export interface Decision {
  id: string;
  kind: 'brute_force' | 'credential_stuffing';
  actor?: string;
  ip: string | null;
  issue_id: string;
  created_at: string;
  until: string;
}

export interface Project {
  id: string;
  org: string;
  name: string;
  enabled: boolean;
  security_monitoring: boolean;
  public_key: string;
  instance_id: string | null;
  installation: {
    instance_id: string;
    base_url: string | null;
    platform: string | null;
    platform_version: string | null;
    terms_version: string | null;
    accepted_by: string | null;
    activated_at: string;
    last_activated_at: string;
  } | null;
  alerts: Alerts;
  /** null: the installation's EVENT_RETENTION_DAYS */
  event_retention_days: number | null;
  created_at: string;
}

/** Sessions or users by final status; `ok` is a healthy ending. */
export interface StatusCounts {
  ok: number;
  errored: number;
  abnormal: number;
  crashed: number;
  total: number;
}

export interface Release {
  release: string;
  environment: string;
  sessions: StatusCounts;
  users: StatusCounts;
  crash_free_sessions: number | null;
  crash_free_users: number | null;
  adoption_sessions: number | null;
  adoption_users: number | null;
  first_seen: string;
  last_seen: string;
}

export interface HourPoint {
  hour: string;
  sessions: StatusCounts;
  users: StatusCounts;
  crash_free_sessions: number | null;
  crash_free_users: number | null;
}

export interface Issue {
  id: string;
  kind: 'error' | 'security';
  title: string;
  culprit: string;
  exception_type: string | null;
  level: string | null;
  status: 'unresolved' | 'resolved' | 'ignored';
  first_seen: string;
  last_seen: string;
  event_count: number;
  last_release: string | null;
  regression_count: number;
  resolved_count: number;
  last_regressed_at: string | null;
  last_regression_kind: 'same_release' | 'new_release' | null;
  companies: string[];
}

/** A row of the issue list: the issue, its events per hour over the last 24 hours and how much user feedback it has. */
export type IssueRow = Issue & { events_24h: number[]; user_feedback: number };

export interface IssueDetail extends Issue {
  user_feedback: number;
  latest_event: unknown;
  latest_event_expired: boolean;
  spread: Record<'releases' | 'environments' | 'companies', { value: string; count: number }[]>;
  hourly: { until: string; last_24h: number[]; last_14d: number[] };
}

export interface IssueEvent {
  issue_id: string;
  index: number;
  newer: string | null;
  older: string | null;
  event: unknown;
  attachments: { slot: number; filename: string; content_type: string | null; attachment_type: string; size: number; kept: boolean; dropped?: string }[];
}

export interface IssueEventSummary {
  event_id: string;
  timestamp: string;
  release: string | null;
  environment: string | null;
  level: string | null;
  message: string | null;
  user: { id: unknown; email: unknown; username: unknown } | null;
}

/** A notification channel (src/services/notify.service.ts channelView); never its secret. */
export interface Channel {
  id: string;
  kind: 'webhook' | 'email';
  url?: string;
  format?: 'json' | 'slack';
  email?: string;
  on: string[];
  environment: string | null;
  level: string | null;
  frequency: { count: number; minutes: number; interval_minutes: number };
  crash_free: { threshold: number; min_sessions: number };
  paused: boolean;
  paused_at: string | null;
  created_at: string;
}

export interface Delivery {
  id: string;
  channel: string;
  event: string;
  status: 'queued' | 'retrying' | 'delivered' | 'failed' | 'in_digest' | 'paused' | 'dropped';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  digest?: string;
  attempts_log: { at: string; status: number | null; error: string | null; answer: string }[];
}

/** GET /api/dashboard/projects/<id>/ingestion: items accepted and dropped, by type and reason. */
export interface IngestCounts {
  since: string;
  until: string;
  accepted: Record<string, number>;
  dropped: { type: string; reason: string; count: number }[];
  hourly: { hour: string; accepted: number; dropped: number }[];
}

/** What a person wrote about an error (GET …/issues/<id>/feedback). */
export interface UserFeedback {
  id: string;
  event_id: string | null;
  source: 'feedback' | 'user_report';
  name: string | null;
  email: string | null;
  comments: string;
  url: string | null;
  at: string;
}
