/**
 * The OpenAPI 3.1 document served at /openapi.json. Request bodies are the
 * JSON Schemas of `schemas/`, as the validator loaded them (OpenAPI 3.1
 * speaks JSON Schema 2020-12, so they are used as they are); everything
 * else comes from ROUTE_DOCS below. test/openapi.test.ts checks ROUTE_DOCS
 * against the routers the API really mounts, both ways.
 */
import type Router from '@koa/router';

/** `dashboard`: a session cookie or an API token with the route's scope; `session`: a session cookie only. */
type Auth = 'none' | 'secret' | 'secret+instance' | 'public' | 'sentry' | 'dashboard' | 'session';

const sessionId = { name: 'id', in: 'path', description: 'a session id (from a sessions list)', schema: { type: 'string' } } as const;
const tokenId = { name: 'id', in: 'path', description: 'a token id (from the tokens list)', schema: { type: 'string' } } as const;
const userEmail = { name: 'email', in: 'path', description: "the user's email", schema: { type: 'string' } } as const;

interface Param {
  name: string;
  in: 'query' | 'path';
  description: string;
  schema: Record<string, unknown>;
}

export interface RouteDoc {
  summary: string;
  auth: Auth;
  /** a schema of schemas/ (its file name without .json), or a media type with a free-form body */
  body?: { schema: string; mediaTypes?: string[] } | { raw: string; description: string };
  params?: Param[];
  /** the query parameters: a `*-query` schema of schemas/, whose properties become the documented parameters */
  query?: string;
  /** status → description of the success answers; the error answers follow from auth and body */
  ok: Record<number, string>;
  errors?: number[];
  tag: string;
}

const id = { name: 'id', in: 'path', description: 'issue id', schema: { type: 'integer', minimum: 1 } } as const;
const event = { name: 'event', in: 'path', description: 'event id (32 hex characters)', schema: { type: 'string', pattern: '^[0-9a-fA-F-]{32,36}$' } } as const;
const project = { name: 'project', in: 'path', description: 'project id', schema: { type: 'integer', minimum: 1 } } as const;
/** The project of a Sentry DSN's path. */
const dsnProject = { name: 'project', in: 'path', description: 'project id (the last part of the DSN path)', schema: { type: 'integer', minimum: 1 } } as const;
const channel = { name: 'channel', in: 'path', description: 'notification channel id', schema: { type: 'integer', minimum: 1 } } as const;
const releaseName = { name: 'release', in: 'path', description: 'release name', schema: { $ref: 'session#/$defs/release' } } as const;

/** Every route of the API, keyed `METHOD /path` with @koa/router's `:param` syntax. */
export const ROUTE_DOCS: Record<string, RouteDoc> = {
  'GET /healthz': { tag: 'operations', summary: 'Liveness: the process is up and serving', auth: 'none', ok: { 200: '`{status: "ok"}`' } },
  'GET /readyz': {
    tag: 'operations',
    summary: 'Readiness: Redis and MongoDB answer and the process is not shutting down',
    auth: 'none',
    ok: { 200: '`{status: "ready", checks}`, or `{status: "degraded", reason: "redis_full", redis_memory, checks}` while Redis is at its maxmemory (ingestion still acknowledged)' },
    errors: [503],
  },
  'GET /metrics': { tag: 'operations', summary: 'Prometheus metrics of every live Lookout process', auth: 'none', ok: { 200: 'Prometheus text format' } },
  'GET /openapi.json': { tag: 'operations', summary: 'This document', auth: 'none', ok: { 200: 'OpenAPI 3.1 document' } },
  'POST /api/v1/sdk/activate': {
    tag: 'installations',
    summary: 'Bind an installation to the project (spec 4.1)',
    auth: 'secret',
    body: { schema: 'activate' },
    ok: { 200: '`{project: {id, name}, org: {id, name}, enabled, public_key, features: {security_monitoring, plan, seats}}` (spec 2.2)' },
    errors: [400, 409, 413, 415],
  },
  'GET /api/v1/sdk/config': { tag: 'installations', summary: "The installation's configuration (spec 4.2)", auth: 'secret+instance', ok: { 200: 'configuration (spec 2.3)' } },
  'PUT /api/v1/sdk/contacts': {
    tag: 'installations',
    summary: 'Replace the contacts of the installation (spec 4.3)',
    auth: 'secret+instance',
    body: { schema: 'contacts' },
    ok: { 200: '`{used, seats, plan}`; 409 `{reason: "seats_exceeded", seats, used, plan}` beyond the seats' },
    errors: [400, 409, 413, 415],
  },
  'GET /api/v1/sdk/decisions': {
    tag: 'installations',
    summary: 'Decisions made by sign-in bursts, to act on (block, delay, captcha): every active one, or with `since` only what changed after that cursor (docs/api.md, Decisions)',
    auth: 'secret+instance',
    params: [{ name: 'since', in: 'query', description: 'the `cursor` of an earlier answer', schema: { type: 'string', pattern: '^\\d{1,20}-\\d{1,20}$' } }],
    ok: { 200: '`{decisions: [{id, kind, actor?, ip, issue_id, created_at, until}], removed: [id], cursor, full?}`' },
    errors: [400],
  },
  'GET /api/dashboard/projects/:project/ingestion': {
    tag: 'dashboard',
    summary: "Settings → Ingestion: what the project's ingestion accepted and dropped, by type and reason",
    auth: 'dashboard',
    params: [project],
    query: 'ingestion-query',
    ok: { 200: 'as GET /api/v1/ingestion' },
    errors: [400, 404],
  },
  'GET /api/dashboard/projects/:project/decisions': {
    tag: 'dashboard',
    summary: "The project's active decisions",
    auth: 'dashboard',
    params: [project],
    ok: { 200: '`{decisions: [{id, kind, actor?, ip, issue_id, created_at, until}]}`' },
    errors: [404],
  },
  'POST /api/dashboard/projects/:project/decisions/:decision/lift': {
    tag: 'dashboard',
    summary: 'Lift a decision (owner): it ends now, and the installations see it in `removed` at their next poll',
    auth: 'dashboard',
    params: [project, { name: 'decision', in: 'path', description: 'decision id', schema: { type: 'string', pattern: '^d\\d+$' } }],
    ok: { 200: '`{lifted}`' },
    errors: [404],
  },
  'OPTIONS /api/v1/sessions': { tag: 'sessions', summary: 'CORS preflight: any origin may post sessions with the public key', auth: 'none', ok: { 204: 'CORS headers' } },
  'POST /api/v1/sessions': {
    tag: 'sessions',
    summary: 'Report sessions: one, a batch of up to 100, or aggregates (spec 4.4)',
    auth: 'public',
    body: { schema: 'sessions', mediaTypes: ['application/json', 'text/plain'] },
    ok: { 202: '`{accepted, skipped, skipped_entries?}`: sessions stored durably; entries skipped, the first ten named `{index, reason, path, message}`' },
    errors: [400, 413, 415, 429],
  },
  'OPTIONS /api/:project/envelope/': { tag: 'sessions', summary: 'CORS preflight of the envelope endpoint', auth: 'none', ok: { 204: 'CORS headers' } },
  'POST /api/:project/envelope/': {
    tag: 'sessions',
    summary: 'Sentry-compatible envelope: event, session, sessions and client_report items are ingested; every other item type is acknowledged and counted',
    auth: 'sentry',
    params: [dsnProject],
    body: { raw: 'application/x-sentry-envelope', description: 'newline-delimited envelope; gzip, deflate or br Content-Encoding' },
    ok: { 200: '`{id, sessions, dropped}`: `dropped` the types of the items not stored' },
    errors: [400, 413, 429],
  },
  'GET /api/v1/ingestion': {
    tag: 'events',
    summary: "What the project's ingestion accepted and dropped (not stored), by item type and reason, with hourly totals",
    auth: 'secret+instance',
    query: 'ingestion-query',
    ok: { 200: '`{since, until, accepted: {type: count}, dropped: [{type, reason, count}], hourly: [{hour, accepted, dropped}]}`' },
    errors: [400],
  },
  'OPTIONS /api/:project/store/': { tag: 'sessions', summary: 'CORS preflight of the store endpoint', auth: 'none', ok: { 204: 'CORS headers' } },
  'POST /api/:project/store/': {
    tag: 'sessions',
    summary: "Sentry's store endpoint (older SDKs and the raven clients): one event; an envelope posted here is read as one",
    auth: 'sentry',
    params: [dsnProject],
    body: { raw: 'application/json', description: 'an event as JSON; gzip, deflate or br Content-Encoding; or base64 of (zlib-deflated) JSON as application/octet-stream' },
    ok: { 200: '`{id}`: the event id' },
    errors: [400, 413, 429],
  },
  'OPTIONS /api/:project/security/': { tag: 'sessions', summary: 'CORS preflight of the security report endpoint (report-to)', auth: 'none', ok: { 204: 'CORS headers' } },
  'POST /api/:project/security/': {
    tag: 'sessions',
    summary: "Browsers' Content-Security-Policy reports (report-uri or report-to): each violation becomes an event in a security issue of the csp kind",
    auth: 'sentry',
    params: [dsnProject],
    body: { raw: 'application/csp-report', description: '`{"csp-report": {...}}` (report-uri), or application/reports+json: `[{type: "csp-violation", url, user_agent, body}]` (report-to)' },
    ok: { 200: '`{ids}`: the event ids of the violations' },
    errors: [400, 413, 429],
  },
  'OPTIONS /api/store/': { tag: 'sessions', summary: 'CORS preflight of the project-less store endpoint', auth: 'none', ok: { 204: 'CORS headers' } },
  'POST /api/store/': {
    tag: 'sessions',
    summary: 'The store endpoint without a project in the path: the project is the public key\'s',
    auth: 'sentry',
    body: { raw: 'application/json', description: 'as POST /api/{project}/store/' },
    ok: { 200: '`{id}`: the event id' },
    errors: [400, 413, 429],
  },
  'POST /api/v1/events': {
    tag: 'events',
    summary: 'Report a sign-in attempt or an error event (spec 4.5)',
    auth: 'secret+instance',
    body: { schema: 'event' },
    ok: { 202: '`{id, duplicate}`' },
    errors: [400, 413, 415],
  },
  'GET /api/v1/issues': {
    tag: 'issues',
    summary: 'List issues (spec 4.6), filtered and ordered; each with `events_24h`, its events per hour over the last 24 hours',
    auth: 'secret+instance',
    query: 'issue-list-query',
    ok: { 200: '`{issues, total, limit, offset, order}` and the filters given' },
    errors: [400],
  },
  'GET /api/v1/issues/:id': {
    tag: 'issues',
    summary: 'One issue with its latest event (spec 4.7), its spread and hourly counts',
    auth: 'secret+instance',
    params: [id],
    ok: { 200: 'the issue, `latest_event` (null and `latest_event_expired: true` once retention deleted it), `spread` `{releases, environments, companies}` (top 10 each, `{value, count}`), `hourly` `{until, last_24h, last_14d}`' },
    errors: [400, 404],
  },
  'GET /api/v1/issues/:id/events': {
    tag: 'issues',
    summary: "The issue's events, newest first",
    auth: 'secret+instance',
    params: [id],
    query: 'page-query',
    ok: { 200: '`{events: [{event_id, timestamp, received_at, release, environment, level, message, user, tags}], total, limit, offset}`' },
    errors: [400, 404],
  },
  'GET /api/v1/issues/:id/feedback': {
    tag: 'issues',
    summary: "The issue's user feedback (Sentry SDKs' feedback and user_report items), newest first",
    auth: 'secret+instance',
    params: [id],
    query: 'page-query',
    ok: { 200: '`{feedback: [{id, event_id, source, name, email, comments, url, at}], total, limit, offset}`' },
    errors: [400, 404],
  },
  'GET /api/v1/issues/:id/events/:event': {
    tag: 'issues',
    summary: 'One event of the issue, whole, with the ids of the newer and the older one',
    auth: 'secret+instance',
    params: [id, event],
    ok: { 200: '`{issue_id, index, newer, older, event}`' },
    errors: [404],
  },
  'POST /api/v1/issues/:id/status': {
    tag: 'issues',
    summary: 'Resolve, ignore or reopen an issue (spec 4.8)',
    auth: 'secret+instance',
    params: [id],
    body: { schema: 'issue-status' },
    ok: { 200: '`{ok: true, status}`' },
    errors: [400, 404, 413, 415],
  },
  'GET /api/v1/releases': {
    tag: 'releases',
    summary: 'Release health: crash-free rates and adoption per release',
    auth: 'secret+instance',
    query: 'release-query',
    ok: { 200: '`{releases, total}`' },
    errors: [400],
  },
  'GET /api/v1/releases/:release': {
    tag: 'releases',
    summary: "One release's health with its hourly series",
    auth: 'secret+instance',
    params: [releaseName],
    query: 'release-query',
    ok: { 200: 'the release and `series`' },
    errors: [400, 404],
  },
  'POST /api/dashboard/session': {
    tag: 'dashboard',
    summary: 'Sign in to the dashboard: sets the HttpOnly session cookie; throttled per account and per address',
    auth: 'none',
    body: { schema: 'sign-in' },
    ok: { 200: '`{email, org, role, csrf_token}`' },
    errors: [400, 401, 413, 415, 429],
  },
  'GET /api/dashboard/session': { tag: 'dashboard', summary: 'Who is signed in, with the CSRF token of the session', auth: 'dashboard', ok: { 200: '`{email, org, role, csrf_token}`' } },
  'DELETE /api/dashboard/session': { tag: 'dashboard', summary: 'Sign out: the session ends server-side', auth: 'dashboard', ok: { 204: 'signed out; the cookie is cleared' } },
  'POST /api/dashboard/password': {
    tag: 'dashboard',
    summary: 'Set a password with the one-time token of `lookout admin user add` (valid 24 hours)',
    auth: 'none',
    body: { schema: 'set-password' },
    ok: { 200: '`{email}`' },
    errors: [400, 413, 415],
  },
  'GET /api/dashboard/projects': { tag: 'dashboard', summary: "The organisation's projects", auth: 'dashboard', ok: { 200: '`{projects}`' } },
  'POST /api/dashboard/projects': {
    tag: 'dashboard',
    summary: 'Create a project (owner); the secret key is shown in this answer only',
    auth: 'dashboard',
    body: { schema: 'project-create' },
    ok: { 201: '`{id, org, name, public_key, secret_key}`' },
    errors: [400, 413, 415],
  },
  'GET /api/dashboard/projects/:project': { tag: 'dashboard', summary: 'A project with its binding (never a secret)', auth: 'dashboard', params: [project], ok: { 200: 'project' }, errors: [404] },
  'PATCH /api/dashboard/projects/:project': {
    tag: 'dashboard',
    summary: 'Rename, enable or disable a project, or switch security monitoring (owner)',
    auth: 'dashboard',
    params: [project],
    body: { schema: 'project-settings' },
    ok: { 200: 'project' },
    errors: [400, 404, 413, 415],
  },
  'POST /api/dashboard/projects/:project/keys': {
    tag: 'dashboard',
    summary: 'Rotate the secret or the public key (owner); the old key stops working in every API process before the answer',
    auth: 'dashboard',
    params: [project],
    body: { schema: 'key-rotate' },
    ok: { 200: '`{id, secret_key}` or `{id, public_key}`' },
    errors: [400, 404, 413, 415],
  },
  'POST /api/dashboard/projects/:project/unbind': {
    tag: 'dashboard',
    summary: 'Unbind the installation (owner): the project and the installation may be activated again at once',
    auth: 'dashboard',
    params: [project],
    ok: { 200: '`{id, unbound}`' },
    errors: [404],
  },
  'PUT /api/dashboard/projects/:project/alerts': {
    tag: 'dashboard',
    summary: 'Set the sign-in burst detection settings',
    auth: 'dashboard',
    params: [project],
    body: { schema: 'alerts' },
    ok: { 200: 'project' },
    errors: [400, 404, 413, 415],
  },
  'POST /api/dashboard/projects/:project/alerts/preview': {
    tag: 'dashboard',
    summary: 'What these settings would have raised from the last 24 hours of sign-in attempts, beside the current settings; changes nothing',
    auth: 'dashboard',
    params: [project],
    body: { schema: 'alerts' },
    ok: { 200: '`{since, until, attempts, current: {settings, brute_force, credential_stuffing}, proposed: {…}}`' },
    errors: [400, 404, 413, 415],
  },
  'GET /api/dashboard/projects/:project/channels': {
    tag: 'dashboard',
    summary: "The project's notification channels, never a secret; a member sees a webhook by its origin only (docs/api.md, Notifications)",
    auth: 'dashboard',
    params: [project],
    ok: { 200: '`{channels: [{id, kind, url|email, format, on, environment, level, frequency, crash_free, paused, paused_at, created_at}]}`' },
    errors: [404],
  },
  'POST /api/dashboard/projects/:project/channels': {
    tag: 'dashboard',
    summary: 'Add a notification channel (owner); a webhook target must have a public address unless WEBHOOK_ALLOW_PRIVATE=true',
    auth: 'dashboard',
    params: [project],
    body: { schema: 'channel' },
    ok: { 201: 'the channel with its signing `secret`, shown only here' },
    errors: [400, 404, 413, 415, 422],
  },
  'DELETE /api/dashboard/projects/:project/channels/:channel': {
    tag: 'dashboard',
    summary: 'Remove a channel (owner); its queued deliveries are dropped',
    auth: 'dashboard',
    params: [project, channel],
    ok: { 200: '`{removed}`' },
    errors: [404],
  },
  'POST /api/dashboard/projects/:project/channels/:channel/test': {
    tag: 'dashboard',
    summary: 'Send a `test` notification through the queue (owner)',
    auth: 'dashboard',
    params: [project, channel],
    ok: { 200: '`{delivery, channel, status}`' },
    errors: [404],
  },
  'POST /api/dashboard/projects/:project/channels/:channel/resume': {
    tag: 'dashboard',
    summary: 'Resume a channel paused after ten failed deliveries in a row (owner)',
    auth: 'dashboard',
    params: [project, channel],
    ok: { 200: 'the channel' },
    errors: [404],
  },
  'POST /api/dashboard/projects/:project/channels/:channel/secret': {
    tag: 'dashboard',
    summary: "A new signing secret for a webhook channel (owner), shown only here",
    auth: 'dashboard',
    params: [project, channel],
    ok: { 200: '`{id, secret}`' },
    errors: [400, 404],
  },
  'GET /api/dashboard/projects/:project/deliveries': {
    tag: 'dashboard',
    summary: "The project's newest notification deliveries, each with its attempts",
    auth: 'dashboard',
    params: [project, { name: 'channel', in: 'query', description: 'only this channel', schema: { type: 'integer', minimum: 1 } }],
    ok: { 200: '`{deliveries: [{id, channel, event, status, attempts, last_status, last_error, created_at, delivered_at, digest?, attempts_log}]}`' },
    errors: [404],
  },
  'GET /api/dashboard/projects/:project/releases': {
    tag: 'dashboard',
    summary: 'The Releases table: as GET /api/v1/releases',
    auth: 'dashboard',
    params: [project],
    query: 'release-query',
    ok: { 200: '`{releases, total}`' },
    errors: [400, 404],
  },
  'GET /api/dashboard/projects/:project/releases/:release': {
    tag: 'dashboard',
    summary: "A release with its hourly series over a range: as GET /api/v1/releases/{release}",
    auth: 'dashboard',
    params: [project, releaseName],
    query: 'release-chart-query',
    ok: { 200: 'release, `series`, `range`, `since`' },
    errors: [400, 404],
  },
  'GET /api/dashboard/projects/:project/issues': {
    tag: 'dashboard',
    summary: 'Issues: as GET /api/v1/issues',
    auth: 'dashboard',
    params: [project],
    query: 'issue-list-query',
    ok: { 200: '`{issues, total, limit, offset, order}`' },
    errors: [400, 404],
  },
  'GET /api/dashboard/projects/:project/issues/:id': {
    tag: 'dashboard',
    summary: 'One issue with its latest event: as GET /api/v1/issues/{id}',
    auth: 'dashboard',
    params: [project, id],
    ok: { 200: 'issue' },
    errors: [404],
  },
  'GET /api/dashboard/projects/:project/issues/:id/events': {
    tag: 'dashboard',
    summary: "An issue's events: as GET /api/v1/issues/{id}/events",
    auth: 'dashboard',
    params: [project, id],
    query: 'page-query',
    ok: { 200: '`{events, total, limit, offset}`' },
    errors: [400, 404],
  },
  'GET /api/dashboard/projects/:project/issues/:id/events/:event/attachments/:slot': {
    tag: 'dashboard',
    summary: "An event's attachment, downloaded (always application/octet-stream, never shown inline)",
    auth: 'dashboard',
    params: [project, id, { name: 'event', in: 'path', description: 'the event id', schema: { type: 'string' } }, { name: 'slot', in: 'path', description: "the attachment's slot, as the event lists it", schema: { type: 'integer', minimum: 0 } }],
    ok: { 200: 'the bytes, as Content-Disposition: attachment' },
    errors: [404],
  },
  'GET /api/dashboard/projects/:project/issues/:id/feedback': {
    tag: 'dashboard',
    summary: "The issue's user feedback, newest first",
    auth: 'dashboard',
    params: [project, id],
    query: 'page-query',
    ok: { 200: 'as GET /api/v1/issues/{id}/feedback' },
    errors: [400, 404],
  },
  'GET /api/dashboard/projects/:project/issues/:id/events/:event': {
    tag: 'dashboard',
    summary: 'One event of an issue: as GET /api/v1/issues/{id}/events/{event}',
    auth: 'dashboard',
    params: [project, id, event],
    ok: { 200: '`{issue_id, index, newer, older, event}`' },
    errors: [404],
  },
  'POST /api/dashboard/projects/:project/issues/:id/status': {
    tag: 'dashboard',
    summary: 'Resolve, ignore or unresolve: as POST /api/v1/issues/{id}/status',
    auth: 'dashboard',
    params: [project, id],
    body: { schema: 'issue-status' },
    ok: { 200: '`{ok, status}`' },
    errors: [400, 404, 413, 415],
  },
  'GET /api/dashboard/org': {
    tag: 'dashboard',
    summary: "The user's organisation: plan, seats, `usage` (used and each list's size), people lists and dashboard users",
    auth: 'dashboard',
    ok: { 200: 'organisation' },
  },
  'PATCH /api/dashboard/org': {
    tag: 'dashboard',
    summary: 'Rename the organisation or change its plan and seats (owner)',
    auth: 'dashboard',
    body: { schema: 'org-settings' },
    ok: { 200: 'organisation' },
    errors: [400, 413, 415],
  },
  'POST /api/dashboard/org/people': {
    tag: 'dashboard',
    summary: 'Add a member, an invite or an email rule (owner)',
    auth: 'dashboard',
    body: { schema: 'person' },
    ok: { 200: 'organisation' },
    errors: [400, 413, 415],
  },
  'GET /api/dashboard/sso/start': {
    tag: 'dashboard',
    summary: "Start single sign-on for an email's domain: redirects to the organisation's OpenID provider (PKCE, state kept in a cookie)",
    auth: 'none',
    params: [{ name: 'email', in: 'query', description: 'the address signing in; its domain picks the organisation', schema: { type: 'string' } }],
    ok: { 302: 'to the identity provider' },
    errors: [400, 404],
  },
  'GET /api/dashboard/sso/callback': {
    tag: 'dashboard',
    summary: "The provider's redirect: state, code (with the PKCE verifier), ID token signature, audience, nonce and email domain checked; opens a session",
    auth: 'none',
    ok: { 302: 'to /projects signed in; a browser refused goes to /sign-in?sso_error=<reason>' },
    errors: [400, 404],
  },
  'GET /api/dashboard/me': { tag: 'dashboard', summary: 'Your account: role, two-factor sign-in, recovery codes left, last sign-in', auth: 'session', ok: { 200: 'account' } },
  'GET /api/dashboard/me/sessions': { tag: 'dashboard', summary: 'Your open sessions (`current` marks this one)', auth: 'session', ok: { 200: '`{sessions}`' } },
  'DELETE /api/dashboard/me/sessions': { tag: 'dashboard', summary: 'End every session of yours but this one', auth: 'session', ok: { 200: '`{ended}`' } },
  'DELETE /api/dashboard/me/sessions/:id': { tag: 'dashboard', summary: 'End one of your sessions', auth: 'session', params: [sessionId], ok: { 200: '`{ended}`' } },
  'POST /api/dashboard/me/password': {
    tag: 'dashboard',
    summary: 'Change your password (the current one checked, throttled); your other sessions end',
    auth: 'session',
    body: { schema: 'change-password' },
    ok: { 200: '`{ended_sessions}`' },
    errors: [400, 429],
  },
  'POST /api/dashboard/me/2fa/start': { tag: 'dashboard', summary: 'Start two-factor enrolment: a TOTP secret, its otpauth:// URL and a QR code (SVG)', auth: 'session', ok: { 200: '`{secret, otpauth_url, qr_svg}`' } },
  'POST /api/dashboard/me/2fa/confirm': {
    tag: 'dashboard',
    summary: 'Confirm enrolment with a code: two-factor sign-in is on; ten single-use recovery codes, shown once',
    auth: 'session',
    body: { schema: 'otp-code' },
    ok: { 200: '`{recovery_codes}`' },
    errors: [400, 409],
  },
  'POST /api/dashboard/me/2fa/disable': {
    tag: 'dashboard',
    summary: 'Turn two-factor sign-in off with a current code or a recovery code (refused when the organisation requires it)',
    auth: 'session',
    body: { schema: 'otp-code' },
    ok: { 200: '`{two_factor: false}`' },
    errors: [400, 409],
  },
  'GET /api/dashboard/me/tokens': { tag: 'dashboard', summary: 'Your API tokens: name, scopes, hint, created and last used (never the token)', auth: 'session', ok: { 200: '`{tokens}`' } },
  'POST /api/dashboard/me/tokens': {
    tag: 'dashboard',
    summary: 'A new API token with scopes; the token is in this answer only',
    auth: 'session',
    body: { schema: 'token-create' },
    ok: { 201: '`{id, name, scopes, token, …}`' },
    errors: [400],
  },
  'DELETE /api/dashboard/me/tokens/:id': { tag: 'dashboard', summary: 'Revoke one of your API tokens', auth: 'session', params: [tokenId], ok: { 200: '`{revoked}`' }, errors: [404] },
  'POST /api/dashboard/org/users': {
    tag: 'dashboard',
    summary: 'Add a dashboard user (owner): an invite link to set a password, valid 24 hours, shown once',
    auth: 'session',
    body: { schema: 'user-invite' },
    ok: { 201: '`{email, role, invite_url, expires_in_hours}`' },
    errors: [400, 409],
  },
  'GET /api/dashboard/org/users/:email/sessions': { tag: 'dashboard', summary: "A user's open sessions (owner)", auth: 'session', params: [userEmail], ok: { 200: '`{sessions}`' }, errors: [404] },
  'DELETE /api/dashboard/org/users/:email/sessions': { tag: 'dashboard', summary: "End every session of a user (owner; yours but this one)", auth: 'session', params: [userEmail], ok: { 200: '`{ended}`' }, errors: [404] },
  'DELETE /api/dashboard/org/users/:email/sessions/:id': {
    tag: 'dashboard',
    summary: "End one session of a user (owner)",
    auth: 'session',
    params: [userEmail, sessionId],
    ok: { 200: '`{ended}`' },
    errors: [404],
  },
  'PATCH /api/dashboard/org/users/:email': {
    tag: 'dashboard',
    summary: 'Disable a user (every session and token ends, sign-in refused) or enable them (owner)',
    auth: 'session',
    params: [userEmail],
    body: { schema: 'user-disable' },
    ok: { 200: '`{email, disabled}`' },
    errors: [400, 404, 409],
  },
  'GET /api/dashboard/org/sso': { tag: 'dashboard', summary: "The organisation's single sign-on (never the client secret) and the redirect URI to register", auth: 'session', ok: { 200: '`{sso, redirect_uri}`' } },
  'PUT /api/dashboard/org/sso': {
    tag: 'dashboard',
    summary: "Set the organisation's OpenID provider (owner); the issuer is discovered first",
    auth: 'session',
    body: { schema: 'sso-settings' },
    ok: { 200: '`{sso}`' },
    errors: [400],
  },
  'DELETE /api/dashboard/org/sso': { tag: 'dashboard', summary: 'Turn single sign-on off (owner)', auth: 'session', ok: { 200: '`{sso: null}`' } },
  'DELETE /api/dashboard/org/people/:list/:email': {
    tag: 'dashboard',
    summary: 'Remove a member, an invite or an email rule (owner)',
    auth: 'dashboard',
    params: [
      { name: 'list', in: 'path', description: 'members, invites or email_rules', schema: { type: 'string', enum: ['members', 'invites', 'email_rules'] } },
      { name: 'email', in: 'path', description: 'the address', schema: { type: 'string' } },
    ],
    ok: { 200: 'organisation' },
    errors: [400],
  },
};

const ALL_METHODS = 10; // a layer answering more methods than this is `router.all` middleware (CORS)

/** `METHOD /path` of every endpoint the routers mount; `router.all` layers stand for their OPTIONS preflight. */
export function routeTable<S>(routers: Router<S>[]): string[] {
  const routes = new Set<string>();
  for (const router of routers) {
    for (const layer of router.stack) {
      if (layer.methods.length === 0) continue; // router.use middleware
      const methods = layer.methods.length > ALL_METHODS ? ['OPTIONS'] : layer.methods.filter((m) => m !== 'HEAD');
      for (const method of methods) routes.add(`${method} ${layer.path}`);
    }
  }
  return [...routes].sort();
}

/**
 * The schemas keep their `$id`, so their own `#/$defs/...` and their
 * references to each other (`"$ref": "session"`) resolve inside the
 * document as they do in the validator; `$schema` is the document's dialect.
 */
function components(schemas: Record<string, object>): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    Object.entries(schemas).map(([name, schema]) => {
      const { $schema: _dialect, ...rest } = schema as Record<string, unknown>;
      return [name, rest];
    }),
  );
}

const STATUS_TEXT: Record<number, string> = {
  400: 'invalid request: malformed JSON, a rule of the schema broken, or a bad parameter',
  401: 'missing or unknown key (dashboard: not signed in)',
  402: 'the plan does not allow it (seats)',
  403: 'the key may not do this (public key on a secret endpoint, or instance not bound); dashboard: a wrong CSRF token, or an owner action by a member',
  404: 'not found (or belongs to another project or organisation)',
  409: 'conflict',
  422: 'a notification target refused by the outbound rules (`rule` names it), or email without SMTP_URL',
  413: 'body larger than BODY_LIMIT_BYTES',
  415: 'unsupported Content-Type',
  429: 'rate limit reached; see Retry-After and RateLimit',
  503: 'a store is unavailable or the process is shutting down',
};

const SECURITY: Record<Auth, Record<string, string[]>[]> = {
  none: [],
  secret: [{ serviceKey: [] }],
  'secret+instance': [{ serviceKey: [], serviceInstance: [] }],
  public: [{ serviceKey: [] }, { keyQuery: [] }],
  sentry: [{ sentryAuth: [] }, { sentryKeyQuery: [] }, {}],
  dashboard: [{ sessionCookie: [] }, { bearerToken: [] }],
  session: [{ sessionCookie: [] }],
};

/** The parameters of a `*-query` schema: one per property, its description beside its schema (which checks it). */
function queryParams(route: string, name: string | undefined, schemas: Record<string, Record<string, unknown>>) {
  if (!name) return [];
  const schema = schemas[name] as { properties?: Record<string, { description?: string }> } | undefined;
  if (!name.endsWith('-query') || !schema?.properties) throw new Error(`${route}: no query schema ${name}.json`);
  return Object.entries(schema.properties).map(([param, { description, ...rest }]) => ({ name: param, in: 'query', description: description ?? '', required: false, schema: rest }));
}

/** `schemas`: the request schemas by name, as `Validator.schemas()` gives them. */
export function buildOpenApi(version: string, requestSchemas: Record<string, object>) {
  const schemas = components(requestSchemas);
  const error = { $ref: '#/components/schemas/Error' };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [route, doc] of Object.entries(ROUTE_DOCS)) {
    const [method, koaPath] = route.split(' ') as [string, string];
    const openPath = koaPath.replace(/:([A-Za-z_]+)/g, '{$1}');
    const errors = [...new Set([...(doc.auth === 'none' ? [] : [401, 403]), ...(doc.errors ?? [])])].sort();
    const responses: Record<string, unknown> = {};
    for (const [status, description] of Object.entries(doc.ok)) responses[status] = { description };
    for (const status of errors) responses[status] = { description: STATUS_TEXT[status] ?? 'error', content: { 'application/json': { schema: error } } };
    let requestBody: unknown;
    if (doc.body && 'schema' in doc.body) {
      if (!schemas[doc.body.schema]) throw new Error(`${route}: no schema ${doc.body.schema}.json`);
      const schema = { $ref: `#/components/schemas/${doc.body.schema}` };
      requestBody = { required: true, content: Object.fromEntries((doc.body.mediaTypes ?? ['application/json']).map((t) => [t, { schema }])) };
    } else if (doc.body) {
      requestBody = { required: true, description: doc.body.description, content: { [doc.body.raw]: { schema: { type: 'string' } } } };
    }
    (paths[openPath] ??= {})[method.toLowerCase()] = {
      tags: [doc.tag],
      summary: doc.summary,
      operationId: `${method.toLowerCase()}${openPath.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string = '') => c.toUpperCase())}`,
      security: SECURITY[doc.auth],
      ...(doc.params || doc.query ? { parameters: [...(doc.params ?? []).map((p) => ({ ...p, required: p.in === 'path' })), ...queryParams(route, doc.query, schemas)] } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Lookout',
      version,
      description: 'Error and security-event tracking backend. Every non-2xx answer is JSON `{reason, message, ...}`.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    paths,
    components: {
      schemas: {
        ...schemas,
        Error: {
          type: 'object',
          required: ['reason', 'message'],
          properties: { reason: { type: 'string', description: 'machine-readable cause' }, message: { type: 'string', description: 'what went wrong, for people' } },
        },
      },
      securitySchemes: {
        serviceKey: { type: 'apiKey', in: 'header', name: 'X-Service-Key', description: 'secret key, or the public key on the sessions endpoint' },
        serviceInstance: { type: 'apiKey', in: 'header', name: 'X-Service-Instance', description: 'instance id returned by activation' },
        keyQuery: { type: 'apiKey', in: 'query', name: 'key', description: 'public key, for navigator.sendBeacon' },
        sentryAuth: { type: 'apiKey', in: 'header', name: 'X-Sentry-Auth', description: '`Sentry sentry_key=<public key>, ...`' },
        sentryKeyQuery: { type: 'apiKey', in: 'query', name: 'sentry_key', description: 'public key' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'lookout_session', description: 'dashboard session (POST /api/dashboard/session); state-changing requests also send X-CSRF-Token' },
        bearerToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'an API token (`lkt_…`): project:read for GET under /projects, project:write for changes there, org:read for GET under /org',
        },
      },
    },
  };
}
