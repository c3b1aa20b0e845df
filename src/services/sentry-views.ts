/**
 * Lookout's records in the shapes of Sentry's web API (issue 70; `../shared/reference/sentry-web-api.md` lists the
 * fields each tool reads): ids as strings, camelCase names, ISO dates, an event's parts as `entries`. Pure: the
 * service (sentry-api.service.ts) reads the records and the routes answer these.
 */
import { shortIdOf } from '../domain/sentry-api.ts';
import type { DeployDoc } from '../store/deploys.store.ts';
import type { OrgDoc } from '../store/orgs.store.ts';
import type { ProjectDoc } from '../store/projects.store.ts';
import type { issueView } from './issue-views.ts';

type IssueRow = ReturnType<typeof issueView> & { users?: number };
type Payload = Record<string, unknown>;

const obj = (v: unknown): Payload | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Payload) : null);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export const slugOf = (p: Pick<ProjectDoc, '_id' | 'slug'>) => p.slug ?? String(p._id);

export function sentryOrg(org: OrgDoc, base: string) {
  const slug = org.slug ?? String(org._id);
  return {
    id: String(org._id),
    slug,
    name: org.name,
    dateCreated: org.created_at.toISOString(),
    isEarlyAdopter: false,
    require2FA: org.require_2fa === true,
    requireEmailVerification: false,
    features: [],
    links: { organizationUrl: `${base}`, regionUrl: base },
  };
}

export function sentryProject(p: ProjectDoc, org: OrgDoc) {
  return {
    id: String(p._id),
    slug: slugOf(p),
    name: p.name,
    platform: null,
    dateCreated: p.created_at.toISOString(),
    isMember: true,
    status: p.enabled ? 'active' : 'disabled',
    organization: { id: String(org._id), slug: org.slug ?? String(org._id), name: org.name },
    team: null,
    teams: [],
  };
}

/** The project fields an issue or release names. */
const projectRef = (p: ProjectDoc) => ({ id: String(p._id), slug: slugOf(p), name: p.name, platform: null });

/** An issue as Sentry lists it; `base` is PUBLIC_URL (its `permalink` opens the issue page). */
export function sentryIssue(issue: IssueRow, p: ProjectDoc, base: string) {
  const id = Number(issue.id);
  const ignored = issue.status === 'ignored';
  return {
    id: issue.id,
    shortId: shortIdOf(slugOf(p), id),
    title: issue.title,
    culprit: issue.culprit || null,
    permalink: `${base}/projects/${p._id}/issues/${issue.id}`,
    level: issue.level,
    status: issue.status,
    substatus: ignored ? (issue.ignore_until_count || issue.ignore_until ? 'archived_until_condition_met' : 'archived_forever') : issue.regressed ? 'regressed' : issue.status === 'resolved' ? null : 'ongoing',
    statusDetails: issue.resolved_in_next_release
      ? { inNextRelease: true }
      : ignored
        ? { ...(issue.ignore_until && { ignoreUntil: issue.ignore_until }), ...(issue.ignore_until_count && { ignoreCount: issue.ignore_until_count }) }
        : {},
    type: issue.kind === 'error' ? 'error' : 'default',
    issueType: issue.kind === 'error' ? 'error' : issue.kind,
    issueCategory: issue.kind === 'error' ? 'error' : issue.kind,
    platform: null,
    count: String(issue.event_count),
    userCount: issue.users ?? 0,
    firstSeen: issue.first_seen,
    lastSeen: issue.last_seen,
    metadata: { title: issue.title, type: issue.exception_type ?? undefined, value: issue.title, location: issue.culprit || undefined },
    project: projectRef(p),
    assignedTo: issue.assignee ? { type: 'user', id: issue.assignee, name: issue.assignee, email: issue.assignee } : null,
    isUnhandled: false,
    firstRelease: issue.first_release ? { version: issue.first_release, shortVersion: shortVersion(issue.first_release) } : null,
    lastRelease: issue.last_release ? { version: issue.last_release, shortVersion: shortVersion(issue.last_release) } : null,
  };
}

/** A release's version without its package (`shop@1.2.0`, `@acme/shop@1.2.0` → `1.2.0`), as Sentry shows it. */
export const shortVersion = (version: string) => version.replace(/^@?[^@]*@/, '');

/** A stack frame as Sentry's API names its fields, with its source lines as `[line number, text]` pairs. */
function frameOf(f: Payload) {
  const line = typeof f.lineno === 'number' ? f.lineno : null;
  const pre = list(f.pre_context).map(String);
  const context = line === null ? [] : [...pre.map((t, i) => [line - pre.length + i, t]), ...(typeof f.context_line === 'string' ? [[line, f.context_line]] : []), ...list(f.post_context).map((t, i) => [line + 1 + i, String(t)])];
  return {
    filename: text(f.filename),
    absPath: text(f.abs_path),
    module: text(f.module),
    package: text(f.package),
    function: text(f.function),
    lineNo: line,
    colNo: typeof f.colno === 'number' ? f.colno : null,
    platform: text(f.platform),
    sourceLink: null,
    inApp: f.in_app === true,
    context,
  };
}

/** An event's parts as Sentry's `entries`: the exception, the message, the request and the breadcrumbs. */
function entriesOf(p: Payload) {
  const entries: { type: string; data: unknown }[] = [];
  const values = list(obj(p.exception)?.values).flatMap((v): Payload[] => (obj(v) ? [obj(v)!] : []));
  if (values.length > 0) {
    entries.push({
      type: 'exception',
      data: {
        values: values.map((v) => ({
          type: text(v.type),
          value: text(v.value),
          module: text(v.module),
          mechanism: obj(v.mechanism),
          stacktrace: obj(v.stacktrace) ? { frames: list(obj(v.stacktrace)!.frames).flatMap((f) => (obj(f) ? [frameOf(obj(f)!)] : [])) } : null,
        })),
      },
    });
  }
  const message = text(p.message) ?? text(obj(p.logentry)?.formatted) ?? text(obj(p.logentry)?.message);
  if (message) entries.push({ type: 'message', data: { formatted: message } });
  const request = obj(p.request);
  if (request) {
    const headers = obj(request.headers) ? Object.entries(obj(request.headers)!).map(([k, v]) => [k, String(v)]) : list(request.headers);
    entries.push({ type: 'request', data: { url: URL.canParse(String(request.url)) ? String(request.url) : null, method: text(request.method), query: request.query_string ?? null, headers } });
  }
  const crumbs = Array.isArray(p.breadcrumbs) ? p.breadcrumbs : list(obj(p.breadcrumbs)?.values);
  if (crumbs.length > 0) {
    entries.push({
      type: 'breadcrumbs',
      data: {
        values: crumbs.flatMap((c) => {
          const b = obj(c);
          if (!b) return [];
          const at = typeof b.timestamp === 'number' ? new Date(b.timestamp * 1000).toISOString() : text(b.timestamp);
          return [{ timestamp: at, type: text(b.type) ?? 'default', category: text(b.category), level: text(b.level) ?? 'info', message: text(b.message), data: obj(b.data) }];
        }),
      },
    });
  }
  return entries;
}

/** An event's tags as Sentry's `[{key, value}]`. */
export function tagsOf(p: Payload): { key: string; value: string }[] {
  const tags = p.tags;
  if (Array.isArray(tags)) return tags.flatMap((t) => (Array.isArray(t) && t.length === 2 ? [{ key: String(t[0]), value: String(t[1]) }] : []));
  return Object.entries(obj(tags) ?? {}).map(([key, value]) => ({ key, value: String(value) }));
}

/** The fields an event list row and a whole event share. */
function eventHead(p: Payload, e: { event_id: string; at: string; received_at?: string; issue: string | null; project: ProjectDoc; title: string }) {
  const user = obj(p.user);
  return {
    id: e.event_id,
    eventID: e.event_id,
    groupID: e.issue,
    projectID: String(e.project._id),
    title: e.title,
    message: text(p.message) ?? text(obj(p.logentry)?.formatted) ?? '',
    culprit: text(p.culprit) ?? text(p.transaction) ?? '',
    dateCreated: e.at,
    dateReceived: e.received_at ?? e.at,
    platform: text(p.platform),
    type: 'error',
    tags: tagsOf(p),
    user: user ? { id: text(user.id) ?? (user.id == null ? null : String(user.id)), email: text(user.email), username: text(user.username), ip_address: text(user.ip_address) } : null,
  };
}

/** A row of an event list (`sentry-cli events list`). */
export const sentryEventRow = eventHead;

/** One event, whole (`…/events/latest/`): its head, its `entries`, its contexts, SDK and release. */
export function sentryEvent(p: Payload, e: Parameters<typeof eventHead>[1]) {
  return {
    ...eventHead(p, e),
    entries: entriesOf(p),
    contexts: Object.fromEntries(Object.entries(obj(p.contexts) ?? {}).filter(([, v]) => obj(v))),
    sdk: obj(p.sdk),
    release: text(p.release) ? { version: text(p.release)!, shortVersion: shortVersion(text(p.release)!) } : null,
    environment: text(p.environment),
    level: text(p.level) ?? 'error',
  };
}

export function sentryDeploy(d: DeployDoc) {
  return {
    id: String(d.n),
    environment: d.environment,
    name: d.name,
    url: d.url,
    dateStarted: d.started_at?.toISOString() ?? null,
    dateFinished: d.finished_at.toISOString(),
  };
}

/** A release across the projects that have it, as Sentry lists it. */
export interface ReleaseFacts {
  version: string;
  created: Date;
  released: Date | null;
  firstEvent: Date | null;
  lastEvent: Date | null;
  newGroups: number;
  lastDeploy: DeployDoc | null;
  deployCount: number;
  projects: ProjectDoc[];
}

export function sentryRelease(r: ReleaseFacts) {
  return {
    id: r.version,
    version: r.version,
    shortVersion: shortVersion(r.version),
    status: 'open',
    dateCreated: r.created.toISOString(),
    dateReleased: r.released?.toISOString() ?? null,
    firstEvent: r.firstEvent?.toISOString() ?? null,
    lastEvent: r.lastEvent?.toISOString() ?? null,
    newGroups: r.newGroups,
    commitCount: 0,
    deployCount: r.deployCount,
    lastCommit: null,
    lastDeploy: r.lastDeploy ? sentryDeploy(r.lastDeploy) : null,
    authors: [],
    projects: r.projects.map(projectRef),
  };
}
