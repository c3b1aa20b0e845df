/**
 * Notifications as pure functions: which channels a trigger reaches, the
 * bodies sent (the JSON webhook, the Slack-compatible one, the digest, the
 * email's text and HTML) and the signature over a body. The worker's
 * dispatcher and delivery handler (src/notify/) only move these around.
 */
import crypto from 'node:crypto';

/** What can trigger a notification, in the order the dashboard lists them. */
export const TRIGGERS = [
  'issue.created',
  'issue.regressed',
  'security.burst',
  'issue.frequency',
  'release.crash_free',
  'security.csp',
  'decision.created',
  'issue.assigned',
  'project.spike',
  'monitor.failed',
  'monitor.recovered',
  'installation.silent',
  'uptime.down',
  'uptime.up',
  'certificate.expiring',
  'performance.regressed',
  'backup.failed',
] as const;
export type Trigger = (typeof TRIGGERS)[number];
/** The triggers of a channel added without `--on`. */
export const DEFAULT_TRIGGERS: readonly Trigger[] = ['issue.created', 'issue.regressed', 'security.burst', 'monitor.failed', 'monitor.recovered', 'installation.silent', 'uptime.down', 'uptime.up', 'certificate.expiring'];

/** Levels from least to most severe; a channel's level filter takes its level and every more severe one. */
export const LEVELS = ['debug', 'info', 'warning', 'error', 'fatal'] as const;

export interface ChannelRules {
  on: Trigger[];
  /** only triggers of this environment (a trigger that has none, as a sign-in burst, passes) */
  environment: string | null;
  /** only triggers of this level or a more severe one */
  level: string | null;
  /** issue.frequency: more than `count` events in `minutes` minutes, at most once per issue per `interval_minutes` */
  frequency: { count: number; minutes: number; interval_minutes: number };
  /** release.crash_free: the hour's crash-free sessions rate below `threshold` % with at least `min_sessions` sessions */
  crash_free: { threshold: number; min_sessions: number };
  /**
   * performance.regressed: a transaction group's p95 over `p95_ms`, or its failure rate over `failure_rate` %, in
   * the last `window_minutes`, with at least `min_count` transactions (null: that half of the rule is off); channels
   * made before it have none stored and follow DEFAULT_PERFORMANCE
   */
  performance?: { p95_ms: number | null; failure_rate: number | null; window_minutes: number; min_count: number };
}

export const DEFAULT_FREQUENCY = { count: 100, minutes: 60, interval_minutes: 30 } as const;
export const DEFAULT_CRASH_FREE = { threshold: 99, min_sessions: 100 } as const;
export const DEFAULT_PERFORMANCE = { p95_ms: 1000, failure_rate: 5, window_minutes: 10, min_count: 20 } as const;

/** A trigger as the scripts record it in a project's outbox: what happened to which issue (or release), and when. */
export interface TriggerRecord {
  event: Trigger;
  /** the issue; none for release.crash_free */
  issue?: number;
  /** when it was raised (ms) */
  at: number;
  environment?: string | null;
  level?: string | null;
  /** set when the trigger was raised for one channel's own rule (frequency, crash-free) */
  channel?: number;
  /** the trigger's own fields, sent as they are (actor, ip, attempts, release, rate, ...) */
  [field: string]: unknown;
}

/** Whether a channel takes a trigger: its kind is on, its filters pass, and it is the channel the trigger names, if any. */
export function channelTakes(channel: ChannelRules & { id: number; created_at: Date }, t: TriggerRecord): boolean {
  if (!channel.on.includes(t.event)) return false;
  if (t.channel !== undefined && t.channel !== channel.id) return false;
  // A channel added after the trigger was raised does not hear of it.
  if (t.at < channel.created_at.getTime()) return false;
  if (channel.environment && t.environment && t.environment !== channel.environment) return false;
  if (channel.level && t.level && levelRank(t.level) < levelRank(channel.level)) return false;
  return true;
}

/** A channel as people name it: its email address, or its webhook's host (a webhook's path may hold its secret). */
export function channelLabel(c: { kind: 'webhook' | 'email'; url: string | null; email: string | null }): string {
  if (c.kind === 'email') return c.email ?? 'email';
  try {
    return `webhook ${new URL(c.url ?? '').host}`;
  } catch {
    return 'webhook';
  }
}

function levelRank(level: string): number {
  const rank = (LEVELS as readonly string[]).indexOf(level);
  return rank === -1 ? LEVELS.indexOf('error') : rank;
}

/** The issue as a notification shows it. */
export interface IssueSummary {
  id: string;
  title: string;
  kind: string;
  level: string;
  status: string;
  event_count: number;
  first_seen: string;
  last_seen: string;
  last_release: string | null;
  url: string;
}

export interface NoticeBody {
  event: Trigger | 'test' | 'digest';
  delivery: string;
  triggered_at: string;
  project: { id: string; name: string };
  issue?: IssueSummary;
  [field: string]: unknown;
}

/** The JSON body of a trigger's webhook: the common fields, then the trigger's own (without the outbox's bookkeeping). */
export function noticeBody(t: TriggerRecord, delivery: string, project: { id: string; name: string }, issue: IssueSummary | null): NoticeBody {
  const { event, at, issue: _issue, channel: _channel, environment, level: _level, ...own } = t;
  return {
    event,
    delivery,
    triggered_at: new Date(at).toISOString(),
    project,
    ...(issue ? { issue } : {}),
    ...(environment ? { environment } : {}),
    ...own,
    // a decision's end, recorded in ms by the script, is sent as a time like every other
    ...(typeof own.until === 'number' ? { until: new Date(own.until).toISOString() } : {}),
  };
}

/** The most triggers a digest names; the rest are counted in `more`. */
export const DIGEST_ITEMS = 50;

/** Noise control per channel: at most this many messages in a window; beyond, one digest per window. */
export const NOISE = { perWindow: 10, windowMs: 60_000, digestItems: DIGEST_ITEMS } as const;

export function digestBody(delivery: string, at: Date, project: { id: string; name: string }, items: NoticeBody[], total: number): NoticeBody {
  return {
    event: 'digest',
    delivery,
    triggered_at: at.toISOString(),
    project,
    items: items.slice(0, DIGEST_ITEMS).map((i) => ({ event: i.event, triggered_at: i.triggered_at, ...(i.issue ? { issue: i.issue } : {}) })),
    more: Math.max(0, total - Math.min(items.length, DIGEST_ITEMS)),
  } as unknown as NoticeBody;
}

const MONITOR_REASONS: Record<string, string> = { missed: 'missed check-in', timeout: 'timed out', error: 'reported an error' };

/** One line saying what happened, for Slack's text, an email's subject and a digest's lines. */
export function headline(body: NoticeBody): string {
  const issue = body.issue ? `${body.issue.title}` : '';
  switch (body.event) {
    case 'issue.created':
      return `New issue: ${issue}`;
    case 'issue.regressed':
      return `Regression: ${issue}`;
    case 'issue.assigned':
      return body.assignee ? `Assigned to ${body.assignee}${body.by ? ` by ${body.by}` : ''}: ${issue}` : `Unassigned: ${issue}`;
    case 'security.csp':
      return `CSP violation: ${issue}`;
    case 'security.burst':
      return `Sign-in burst: ${body.attempts} failed sign-ins${body.actor ? ` for ${body.actor}` : ''} from ${body.ip ?? 'an unknown address'}`;
    case 'decision.created':
      return `Decision: ${body.type ?? 'ban'} ${body.ip ?? body.actor ?? 'an unknown address'} until ${body.until}${Number(body.escalation) > 0 ? ` (escalated ×${2 ** Number(body.escalation)})` : ''}`;
    case 'issue.frequency':
      return `Frequent: ${issue} (${body.events} events in ${body.minutes} min)`;
    case 'project.spike':
      return `Spike: error events far above the usual rate (${body.usual_per_hour} an hour); held to ${body.ceiling_per_minute} a minute until it calms`;
    case 'monitor.failed':
      return `Monitor failed: ${body.name} (${body.environment}): ${MONITOR_REASONS[String(body.reason)] ?? body.reason}`;
    case 'monitor.recovered':
      return `Monitor recovered: ${body.name} (${body.environment})`;
    case 'uptime.down':
      return `Down: ${body.url} (${body.reason})`;
    case 'uptime.up':
      return `Up again: ${body.url}`;
    case 'certificate.expiring':
      return `Certificate of ${body.host} expires in ${body.days} days or less (${body.expires})`;
    case 'installation.silent':
      return `Installation silent: ${body.instance} (nothing heard for ${body.minutes} minutes)`;
    case 'release.crash_free':
      return `Crash-free sessions of ${body.release} at ${body.rate}% (below ${body.threshold}%)`;
    case 'performance.regressed': {
      const p95 = typeof body.p95_ms === 'number' ? `p95 ${Math.round(body.p95_ms)} ms` : 'p95 —';
      const failures = typeof body.failure_rate === 'number' ? `${Number((body.failure_rate * 100).toFixed(1))}% failed` : '';
      return `Slow or failing: ${body.transaction} (${[p95, failures].filter(Boolean).join(', ')} in ${body.window_minutes} min)`;
    }
    case 'backup.failed':
      return `Backup failed: ${body.reason} (scheduled backups into ${body.dir})`;
    case 'test':
      return 'Test notification from Lookout';
    default:
      return `${(body.items as unknown[]).length + Number(body.more)} notifications`;
  }
}

/** The link a notification carries: the issue, or the release, or the project. */
export function linkOf(body: NoticeBody, publicUrl: string): string {
  if (body.issue) return body.issue.url;
  if (body.event === 'release.crash_free') return `${publicUrl}/projects/${body.project.id}/releases/${encodeURIComponent(String(body.release))}`;
  if (body.event === 'project.spike') return `${publicUrl}/projects/${body.project.id}#ingestion`;
  if (body.event === 'performance.regressed') return `${publicUrl}/projects/${body.project.id}/performance/${body.group}?range=1h`;
  return `${publicUrl}/projects/${body.project.id}/issues`;
}

/** A body Slack incoming webhooks take (and Mattermost's and Discord's Slack-compatible endpoints): `text`, plus blocks. */
export function slackBody(body: NoticeBody, publicUrl: string): { text: string; blocks: unknown[] } {
  const lines =
    body.event === 'digest'
      ? (body.items as NoticeBody[]).map((i) => `• ${headline(i)}`).concat(Number(body.more) > 0 ? [`… and ${body.more} more`] : [])
      : [headline(body)];
  const link = linkOf(body, publicUrl);
  // event text is data: escaped in `text` as in the blocks, so it forms no mention, link or channel ping
  const text = `[${escapeSlack(body.project.name)}] ${escapeSlack(body.event === 'digest' ? `${headline(body)}:\n${lines.join('\n')}` : lines[0]!)} <${link}|Open in Lookout>`;
  return {
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${escapeSlack(body.project.name)}*\n${lines.map(escapeSlack).join('\n')}` } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `${body.event} · <${link}|Open in Lookout>` }] },
    ],
  };
}

/**
 * Text made inert in Slack's mrkdwn: `&`, `<` and `>` escaped (no `<!channel>`, `<@user>` or `<url|label>` can
 * form), and a zero-width space after the `@` of `@channel`, `@here` and `@everyone`, which Discord's
 * Slack-compatible endpoint would otherwise ping.
 */
export function escapeSlack(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/@(channel|here|everyone)\b/gi, '@\u200b$1');
}

/** An email: the subject names the project and what happened; a plain-text and an HTML part with the link. */
export function emailOf(body: NoticeBody, publicUrl: string): { subject: string; text: string; html: string } {
  const subject = `[Lookout] ${body.project.name}: ${headline(body)}`;
  const link = linkOf(body, publicUrl);
  const lines =
    body.event === 'digest'
      ? (body.items as NoticeBody[]).map(headline).concat(Number(body.more) > 0 ? [`… and ${body.more} more`] : [])
      : detailLines(body);
  const text = `${headline(body)}\n\n${lines.join('\n')}\n\n${link}\n`;
  const html =
    `<p><strong>${escapeHtml(headline(body))}</strong></p>` +
    `<ul>${lines.map((l) => `<li>${escapeHtml(l)}</li>`).join('')}</ul>` +
    `<p><a href="${escapeHtml(link)}">Open in Lookout</a></p>`;
  return { subject, text, html };
}

function detailLines(body: NoticeBody): string[] {
  const lines = [`Project: ${body.project.name}`, `When: ${body.triggered_at}`];
  if (body.issue) lines.push(`Issue: ${body.issue.title} (${body.issue.kind}, ${body.issue.level}, ${body.issue.event_count} events)`);
  if (body.issue?.last_release) lines.push(`Last release: ${body.issue.last_release}`);
  if (typeof body.environment === 'string') lines.push(`Environment: ${body.environment}`);
  return lines;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** `X-Lookout-Signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` with the channel's secret. */
export function signatureHeader(secret: string, rawBody: string, at: Date): string {
  const t = Math.floor(at.getTime() / 1000);
  return `t=${t},v1=${crypto.createHmac('sha256', secret).update(`${t}.${rawBody}`).digest('hex')}`;
}

/**
 * A receiver's check, as docs/api.md shows it: the signature matches the
 * raw body and was made within `toleranceSeconds` of `now`.
 */
export function verifySignature(secret: string, rawBody: string, header: string, now: Date, toleranceSeconds = 300): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || !parts.v1 || Math.abs(now.getTime() / 1000 - t) > toleranceSeconds) return false;
  const expected = crypto.createHmac('sha256', secret).update(`${t}.${rawBody}`).digest();
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

/** The trigger names of `--on` (comma-separated), or the defaults; an unknown name is the caller's usage error. */
export function parseTriggers(text: string | undefined): { on: Trigger[] } | { unknown: string[] } {
  if (text === undefined || text.trim() === '') return { on: [...DEFAULT_TRIGGERS] };
  const names = [...new Set(text.split(',').map((s) => s.trim()).filter(Boolean))];
  const unknown = names.filter((n) => !(TRIGGERS as readonly string[]).includes(n));
  return unknown.length > 0 ? { unknown } : { on: names as Trigger[] };
}
