/**
 * Sentry's web API for the tools teams drive their tracker with (issue 70): sentry-cli, Sentry's MCP server,
 * Grafana's data source. Each read takes Lookout's own (the issue list and its search, an issue's events, release
 * health, tool releases and deploys) and answers in Sentry's shapes (./sentry-views.ts); each change goes through
 * the same service a person's would (an issue's status through IssuesService.setStatus, with its activity).
 */
import { issueOrderOf, readIssueRef, readStatsPeriod, shortIdOf, statusChangeOf } from '../domain/sentry-api.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { IssueListQuery, IssueStatusBody, SentryIssueUpdateBody } from '../generated/schema-types.ts';
import { eventKey, payloadOf, type EventDoc } from '../store/events.store.ts';
import type { Stores } from '../store/index.ts';
import type { OrgDoc } from '../store/orgs.store.ts';
import type { ProjectDoc } from '../store/projects.store.ts';
import type { IssuesService } from './issues.service.ts';
import type { ReleasesService } from './releases.service.ts';
import { sentryDeploy, sentryEvent, sentryEventRow, sentryIssue, sentryOrg, sentryProject, sentryRelease, slugOf, type ReleaseFacts } from './sentry-views.ts';

/** A list's paging as Sentry's lists take it: an offset read from the cursor and a page size. */
export interface Page {
  offset: number;
  limit: number;
}

/** The fields `search_events` may ask of the errors dataset, and what each is read from. */
const EVENT_FIELDS = new Set(['id', 'issue', 'issue.id', 'title', 'message', 'project', 'project.id', 'timestamp', 'level', 'error.type', 'error.value', 'culprit', 'user.email', 'user.id', 'user.username', 'release', 'environment', 'count()', 'last_seen()', 'platform', 'transaction']);

/** Most issues an event list reads the newest events of (a deeper page is refused). */
const EVENTS_DEPTH = 1000;

export function makeSentryApiService(deps: {
  stores: Pick<Stores, 'orgs' | 'projects' | 'sourcemaps' | 'deploys' | 'issues' | 'events'>;
  issues: IssuesService;
  releases: ReleasesService;
  publicUrl: string;
}) {
  const { stores, issues, publicUrl } = deps;

  async function projectOf(org: OrgDoc, segment: string): Promise<ProjectDoc> {
    const p = await stores.projects.byIdOrSlug(org._id, segment);
    if (!p) throw new NotFoundError('project_not_found', `no project ${segment} in organisation ${org.slug ?? org._id}`);
    return p;
  }

  /** The projects an organisation-wide request names (`project=<id>`, repeated; none or -1: all of them). */
  async function projectsNamed(org: OrgDoc, asked: string[]): Promise<ProjectDoc[]> {
    const all = await stores.projects.list(org._id);
    const ids = asked.filter((a) => a !== '-1' && a !== '');
    if (ids.length === 0) return all;
    return ids.map((id) => {
      const p = all.find((x) => String(x._id) === id || x.slug === id);
      if (!p) throw new NotFoundError('project_not_found', `no project ${id} in organisation ${org.slug ?? org._id}`);
      return p;
    });
  }

  /** The issue a path names (an id or a short id), in one of the organisation's projects. */
  async function issueRef(org: OrgDoc, segment: string, within?: ProjectDoc): Promise<{ project: ProjectDoc; id: number }> {
    const ref = readIssueRef(segment);
    const missing = () => new NotFoundError('issue_not_found', `no issue ${segment} in organisation ${org.slug ?? org._id}`);
    if (!ref) throw missing();
    const candidates = within ? [within] : await stores.projects.list(org._id);
    const stored = await stores.issues.projectOf(ref.id);
    const ordered = stored === null ? candidates : candidates.filter((p) => p._id === stored);
    for (const project of ordered) {
      if (ref.projectSlug !== null && slugOf(project) !== ref.projectSlug) continue;
      try {
        await issues.mustExist(project._id, ref.id);
        return { project, id: ref.id };
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
    }
    throw missing();
  }

  /** Sentry's issue list parameters as Lookout's list query: `query` (Sentry's syntax), `statsPeriod`, `sort`. */
  function listQuery(asked: { query?: string; statsPeriod?: string; sort?: string }, page: Page): IssueListQuery {
    const period = asked.statsPeriod ? readStatsPeriod(asked.statsPeriod) : null;
    if (asked.statsPeriod && period === null) throw new BadRequestError('invalid_stats_period', `statsPeriod ${asked.statsPeriod} is not a period such as 24h or 14d`);
    const query = [asked.query ?? '', period ? `last-seen:-${Math.round(period / 60_000)}m` : ''].filter(Boolean).join(' ');
    return { status: 'unresolved', limit: page.limit, offset: page.offset, order: issueOrderOf(asked.sort), query } as IssueListQuery;
  }

  /** A page of the issues of `projects` in Sentry's shape, and whether there are more. */
  async function issueList(projects: ProjectDoc[], asked: { query?: string; statsPeriod?: string; sort?: string }, page: Page) {
    const query = listQuery(asked, page);
    if (projects.length === 1) {
      const found = await issues.list(projects[0]!._id, query);
      return { rows: found.issues.map((i) => sentryIssue(i, projects[0]!, publicUrl)), more: page.offset + found.issues.length < found.total, search: found.search };
    }
    // several projects: each one's first offset+limit, merged in the list's order
    const lists = await Promise.all(projects.map(async (p) => ({ p, found: await issues.list(p._id, { ...query, offset: 0, limit: Math.min(500, page.offset + page.limit) }) })));
    const key = { last_seen: 'lastSeen', first_seen: 'firstSeen', event_count: 'count' }[query.order as 'last_seen'] as 'lastSeen' | 'firstSeen' | 'count';
    const rows = lists.flatMap(({ p, found }) => found.issues.map((i) => sentryIssue(i, p, publicUrl)));
    rows.sort((a, b) => (key === 'count' ? Number(b.count) - Number(a.count) : b[key].localeCompare(a[key])) || Number(a.id) - Number(b.id));
    const total = lists.reduce((n, l) => n + l.found.total, 0);
    return { rows: rows.slice(page.offset, page.offset + page.limit), more: page.offset + page.limit < total, search: lists[0]?.found.search };
  }

  /** The newest events of `projects` whose issues match `query`, as event rows. */
  async function newestEvents(projects: ProjectDoc[], query: string | undefined, page: Page) {
    const want = page.offset + page.limit;
    if (want > EVENTS_DEPTH) throw new BadRequestError('too_deep', `events are listed to a depth of ${EVENTS_DEPTH}; narrow the query`);
    // one more than the page, to say whether there are more
    const need = want + 1;
    const found = await Promise.all(
      projects.map(async (p) => {
        // which issues, by last seen: their rows' extras are not shown
        const list = await issues.list(p._id, listQuery({ query }, { offset: 0, limit: Math.min(500, need) }), null, new Date(), 'bare');
        // the `need` newest events are no older than the need-th issue's last event
        const since = list.issues.length >= need ? Date.parse(list.issues[need - 1]!.last_seen) : 0;
        const newest = await issues.newestEvents(
          p._id,
          list.issues.map((i) => Number(i.id)),
          need,
          since,
        );
        const titles = new Map(list.issues.map((i) => [Number(i.id), i.title]));
        return newest.map((e) => ({ ...e, project: p, title: titles.get(e.issue)! }));
      }),
    );
    const all = found.flat().sort((a, b) => b.doc.at.getTime() - a.doc.at.getTime());
    return { events: all.slice(page.offset, want), more: all.length > want };
  }

  const eventFacts = (e: { doc: EventDoc; issue: number; project: ProjectDoc; title: string }) => ({
    event_id: e.doc.event_id,
    at: e.doc.at.toISOString(),
    received_at: e.doc.received_at.toISOString(),
    issue: String(e.issue),
    project: e.project,
    title: e.title,
  });

  /** Every release of `projects` (tool-made, or seen in sessions and events), newest first. */
  async function releaseFacts(projects: ProjectDoc[], now: Date): Promise<ReleaseFacts[]> {
    const byVersion = new Map<string, ReleaseFacts>();
    const entry = (version: string, p: ProjectDoc, created: Date): ReleaseFacts => {
      let r = byVersion.get(version);
      if (!r) byVersion.set(version, (r = { version, created, released: null, firstEvent: null, lastEvent: null, newGroups: 0, lastDeploy: null, deployCount: 0, projects: [] }));
      if (!r.projects.includes(p)) r.projects.push(p);
      if (created < r.created) r.created = created;
      return r;
    };
    for (const p of projects) {
      const [health, made, seen] = await Promise.all([deps.releases.list(p._id, undefined, now), stores.sourcemaps.releasesOf(p._id), issues.releasesSeen(p._id)]);
      for (const t of made) {
        const r = entry(t.version, p, t.created_at);
        if (t.released_at && (!r.released || t.released_at > r.released)) r.released = t.released_at;
      }
      for (const e of seen) {
        const first = new Date(e.first);
        const r = entry(e.release, p, first);
        if (!r.firstEvent || first < r.firstEvent) r.firstEvent = first;
      }
      for (const h of health.releases) {
        const r = entry(h.release, p, new Date(h.first_seen));
        const first = new Date(h.first_seen);
        const last = new Date(h.last_seen);
        if (!r.firstEvent || first < r.firstEvent) r.firstEvent = first;
        if (!r.lastEvent || last > r.lastEvent) r.lastEvent = last;
      }
      const versions = [...byVersion.values()].filter((r) => r.projects.includes(p)).map((r) => r.version);
      const [counts, deploys] = await Promise.all([issues.releaseIssues(p._id, versions), stores.deploys.ofReleases(p._id, versions)]);
      for (const v of versions) {
        const r = byVersion.get(v)!;
        r.newGroups += counts.get(v)?.new ?? 0;
        const list = deploys.get(v) ?? [];
        r.deployCount += list.length;
        if (list[0] && (!r.lastDeploy || list[0].finished_at > r.lastDeploy.finished_at)) r.lastDeploy = list[0];
      }
    }
    return [...byVersion.values()].sort((a, b) => (b.lastEvent ?? b.created).getTime() - (a.lastEvent ?? a.created).getTime() || a.version.localeCompare(b.version));
  }

  return {
    projectOf,
    projectsNamed,
    issueRef,

    org: (org: OrgDoc) => sentryOrg(org, publicUrl),
    project: (p: ProjectDoc, org: OrgDoc) => sentryProject(p, org),
    async projects(org: OrgDoc) {
      return (await stores.projects.list(org._id)).map((p) => sentryProject(p, org));
    },

    issueList,

    async issue(org: OrgDoc, segment: string, within?: ProjectDoc) {
      const { project, id } = await issueRef(org, segment, within);
      const found = await issues.summary(project._id, id);
      return sentryIssue(found, project, publicUrl);
    },

    /** Sets the status of the issues named (Sentry's words); the issues not found are named in the error. */
    async setStatus(refs: { project: ProjectDoc; id: number }[], body: SentryIssueUpdateBody, by: string, now: Date): Promise<IssueStatusBody> {
      const change = statusChangeOf(body, now);
      if (!change) throw new BadRequestError('invalid_status', 'status is one of resolved, resolvedInNextRelease, unresolved, ignored (or muted)');
      for (const r of refs) await issues.setStatus(r.project._id, r.id, change, by, now);
      return change;
    },

    /** Changes the status of the issue a path names; answers the issue as it is now. */
    async updateIssue(org: OrgDoc, segment: string, body: SentryIssueUpdateBody, by: string, now: Date) {
      const ref = await issueRef(org, segment);
      await this.setStatus([ref], body, by, now);
      return this.issue(org, String(ref.id));
    },

    /** Every issue of the project with this status (`sentry-cli issues resolve --all`), up to 10,000. */
    async allIssues(project: ProjectDoc, status: string) {
      if (!['unresolved', 'resolved', 'ignored'].includes(status)) throw new BadRequestError('invalid_status', 'status is one of unresolved, resolved, ignored');
      const refs: { project: ProjectDoc; id: number }[] = [];
      for (let offset = 0; offset < 10_000; offset += 500) {
        const page = await issues.list(project._id, { status, limit: 500, offset, order: 'id' } as IssueListQuery);
        refs.push(...page.issues.map((i) => ({ project, id: Number(i.id) })));
        if (page.issues.length < 500) break;
      }
      return refs;
    },

    /** The issue's latest event (`latest`) or one of its events, whole. */
    async issueEvent(org: OrgDoc, segment: string, eventId: string) {
      const { project, id } = await issueRef(org, segment);
      const issue = await issues.summary(project._id, id);
      // a named event is the issue's (issues.event answers 404 otherwise)
      const wanted: EventDoc | null | undefined = eventId === 'latest' ? (await issues.newestEvents(project._id, [id], 1))[0]?.doc : (await issues.event(project._id, id, eventId)) && (await stores.events.get(eventKey(project._id, eventId)));
      if (!wanted) throw new NotFoundError('event_not_found', `no event ${eventId} of issue ${segment}`);
      return sentryEvent(payloadOf(wanted), eventFacts({ doc: wanted, issue: id, project, title: issue.title }));
    },

    /** A page of the issue's events, newest first. */
    async issueEvents(org: OrgDoc, segment: string, page: Page) {
      const { project, id } = await issueRef(org, segment);
      const issue = await issues.summary(project._id, id);
      const found = await issues.newestEvents(project._id, [id], page.offset + page.limit);
      const rows = found.slice(page.offset).map((e) => sentryEventRow(payloadOf(e.doc), eventFacts({ ...e, project, title: issue.title })));
      return { rows, more: page.offset + page.limit < (issue.event_count ?? 0) };
    },

    /** A page of the projects' newest events (whose issues match `query`), as `sentry-cli events list` shows them. */
    async events(projects: ProjectDoc[], query: string | undefined, page: Page) {
      const found = await newestEvents(projects, query, page);
      return { rows: found.events.map((e) => sentryEventRow(payloadOf(e.doc), eventFacts(e))), more: found.more };
    },

    /** Sentry's Discover rows of the errors dataset (`search_events`): the fields asked, per event. */
    async discover(projects: ProjectDoc[], query: string | undefined, fields: string[], page: Page) {
      const unknown = fields.filter((f) => !EVENT_FIELDS.has(f));
      if (unknown.length) throw new BadRequestError('unknown_field', `Lookout's events search does not serve ${unknown.join(', ')}`);
      const found = await newestEvents(projects, query, page);
      const data = found.events.map((e) => {
        const row = sentryEvent(payloadOf(e.doc), eventFacts(e));
        const exception = row.entries.find((x) => x.type === 'exception')?.data as { values: { type: string | null; value: string | null }[] } | undefined;
        const value: Record<string, unknown> = {
          id: row.id,
          issue: shortIdOf(slugOf(e.project), e.issue),
          'issue.id': String(e.issue),
          title: row.title,
          message: row.message,
          project: slugOf(e.project),
          'project.id': String(e.project._id),
          timestamp: row.dateCreated,
          level: row.level,
          'error.type': exception?.values.map((v) => v.type).filter(Boolean) ?? [],
          'error.value': exception?.values.map((v) => v.value).filter(Boolean) ?? [],
          culprit: row.culprit,
          'user.email': row.user?.email ?? null,
          'user.id': row.user?.id ?? null,
          'user.username': row.user?.username ?? null,
          release: row.release?.version ?? null,
          environment: row.environment,
          'count()': 1,
          'last_seen()': row.dateCreated,
          platform: row.platform,
          transaction: row.culprit,
        };
        return Object.fromEntries(fields.map((f) => [f, value[f]]));
      });
      return { rows: data, more: found.more, meta: { fields: Object.fromEntries(fields.map((f) => [f, f === 'count()' ? 'integer' : f === 'timestamp' || f === 'last_seen()' ? 'date' : 'string'])), units: {} } };
    },

    /** What Sentry's `events/validate/` answers: which fields and datasets this search can serve. */
    validate(dataset: string, fields: string[]) {
      const datasetOk = dataset === 'errors';
      const field = fields.map((name) => ({ name, valid: EVENT_FIELDS.has(name), attrType: 'string', error: EVENT_FIELDS.has(name) ? null : `Lookout's events search does not serve ${name}` }));
      return {
        valid: datasetOk && field.every((f) => f.valid),
        projects: [],
        dataset: [{ name: dataset, valid: datasetOk, error: datasetOk ? null : `Lookout searches the errors dataset only` }],
        environment: [],
        field,
        query: { valid: true, error: null, fields: [] },
        orderby: [],
      };
    },

    async releases(projects: ProjectDoc[], query: string | undefined, page: Page, now: Date) {
      const all = (await releaseFacts(projects, now)).filter((r) => !query || r.version.includes(query));
      return { rows: all.slice(page.offset, page.offset + page.limit).map(sentryRelease), more: page.offset + page.limit < all.length };
    },

    async release(projects: ProjectDoc[], version: string, now: Date) {
      const found = (await releaseFacts(projects, now)).find((r) => r.version === version);
      if (!found) throw new NotFoundError('release_not_found', `no release ${version}`);
      return sentryRelease(found);
    },

    /** Records a deploy of the release in each of its projects (those named, or all that have it). */
    async addDeploy(org: OrgDoc, version: string, body: { environment: string; name?: string | null; url?: string | null; dateStarted?: string | null; dateFinished?: string | null; projects?: string[] }, now: Date) {
      const named = body.projects?.length ? await Promise.all(body.projects.map((p) => projectOf(org, p))) : (await releaseFacts(await stores.projects.list(org._id), now)).find((r) => r.version === version)?.projects;
      if (!named?.length) throw new NotFoundError('release_not_found', `no release ${version}: make it first (sentry-cli releases new)`);
      const date = (t: string | null | undefined) => {
        if (!t) return null;
        const at = new Date(t);
        if (Number.isNaN(at.getTime())) throw new BadRequestError('invalid_date', `${t} is not a date`);
        return at;
      };
      const deploy = { environment: body.environment, name: body.name ?? null, url: body.url ?? null, started_at: date(body.dateStarted), finished_at: date(body.dateFinished) ?? now };
      let made = null;
      for (const p of named) made = await stores.deploys.add(p._id, version, deploy);
      return sentryDeploy(made!);
    },

    /** A project's release's deploys as the release page shows them, newest first. */
    async deploysOf(project: number, version: string) {
      const list = (await stores.deploys.ofReleases(project, [version])).get(version) ?? [];
      return list.map((d) => ({ environment: d.environment, name: d.name, url: d.url, started_at: d.started_at?.toISOString() ?? null, finished_at: d.finished_at.toISOString() }));
    },

    async deploys(org: OrgDoc, version: string, now: Date) {
      const projects = await stores.projects.list(org._id);
      const seen = new Map<string, ReturnType<typeof sentryDeploy>>();
      for (const p of projects) {
        for (const d of (await stores.deploys.ofReleases(p._id, [version])).get(version) ?? []) {
          // one deploy recorded in several projects shows once
          const key = `${d.environment}\n${d.name}\n${d.finished_at.getTime()}`;
          if (!seen.has(key)) seen.set(key, sentryDeploy(d));
        }
      }
      // none: a release without deploys is an empty list, one that does not exist is not found
      if (seen.size === 0 && !(await releaseFacts(projects, now)).some((r) => r.version === version)) throw new NotFoundError('release_not_found', `no release ${version}`);
      return [...seen.values()].sort((a, b) => b.dateFinished.localeCompare(a.dateFinished));
    },
  };
}
export type SentryApiService = ReturnType<typeof makeSentryApiService>;
