/**
 * The reads of issues that must stay flat as a project grows, served from
 * the ordered structures in Redis that the scripts keep (docs/architecture.md):
 * - a page of the issue list, filtered and ordered (list-issues-3.lua over
 *   the indexes snapshot-issues-3.lua keeps), with each row's last 24 hours;
 * - an issue's spread (releases, environments, companies) and hourly counts,
 *   kept as its events are applied (apply-events-4.lua);
 * - a page of an issue's events, newest first, and an event's neighbours.
 * Events themselves are then read from MongoDB by `_id`.
 */
import type { RedisClient } from '../redis/connect.ts';
import { readSpreadField } from '../domain/client-keys.ts';
import type { ListPlan } from '../domain/search.ts';
import type { IssueDoc } from '../store/issues.store.ts';
import { hourIndex, readIssue } from './issue-hash.ts';
import { answerOf, defineScripts, projectKeys } from './scripts.ts';

/** The fields of an issue hash a list row carries, in the order snapshot-issues-3.lua writes them. */
const ROW_FIELDS = [
  'kind',
  'fingerprint',
  'title',
  'culprit',
  'exception_type',
  'level',
  'status',
  'first',
  'last',
  'count',
  'last_release',
  'regressions',
  'resolves',
  'resolved_at',
  'resolved_release',
  'regressed_at',
  'regression_kind',
  'created',
  'latest',
  'policy',
  'first_release',
  'assignee',
  'resolved_next',
  'ignore_count',
  'ignore_until',
  'regressed_release',
];

export const ISSUE_ORDERS = ['last_seen', 'first_seen', 'event_count', 'id'] as const;
export type IssueOrder = (typeof ISSUE_ORDERS)[number];
const ORDER_KEY: Record<IssueOrder, { zset: string; desc: boolean }> = {
  last_seen: { zset: 'last', desc: true },
  first_seen: { zset: 'first', desc: true },
  event_count: { zset: 'count', desc: true },
  id: { zset: 'id', desc: false },
};

/** A page of an issue list: what it matches (src/domain/search.ts' listPlan), its order and where it starts. */
export interface ListPage {
  plan: ListPlan;
  order: IssueOrder;
  offset: number;
  limit: number;
  /** rows without their extras (last24h empty, feedback and users 0, matching null): for reads needing only the issues */
  bare?: boolean;
}

/** A row of a list: the issue, its events per hour over the last 24 hours, its feedback and users, and its events matching the plan's release and environment (null without). */
export interface ListRow {
  doc: IssueDoc;
  last24h: number[];
  feedback: number;
  users: number;
  matching: number | null;
}

interface Count {
  value: string;
  count: number;
}

/** Where an issue's events come from: each dimension's values with their events, most first, and each tag key's. */
export interface Spread {
  releases: Count[];
  environments: Count[];
  companies: Count[];
  actors: Count[];
  addresses: Count[];
  tags: { key: string; total: number; values: Count[] }[];
}

export function makeIssueReads(redis: RedisClient, opts: { prefix: string }) {
  const r = defineScripts(redis);
  const keys = (project: number) => projectKeys(opts.prefix, project);

  return {
    /** One page of issues, or 'unverified' when the project's state must be verified first. */
    async list(project: number, q: ListPage, now: Date): Promise<'unverified' | { total: number; estimated: boolean; items: ListRow[] }> {
      const k = keys(project);
      const order = ORDER_KEY[q.order];
      const { status, sets, not, ranges, count } = q.plan;
      const plan = {
        in: sets.map((s) => s.set),
        counted: sets.map((s) => s.counted),
        complement: sets.map((s) => s.complement ?? ''),
        out: not.map((s) => s.set),
        out_counted: not.map((s) => s.counted),
        ranges: ranges.map((r) => [`x:${status}:${r.on}`, String(r.min), String(r.max)]),
        ...(count !== undefined && { count }),
      };
      const [code, total, estimated, ...flat] = await r.listIssues(
        k.epoch,
        `${k.base}x:${status}:${order.zset}`,
        `${k.base}xn:${status}`,
        k.base,
        order.desc ? 'desc' : 'asc',
        q.offset,
        q.limit,
        hourIndex(now),
        JSON.stringify(plan),
        ...(q.bare ? ['bare'] : []),
      );
      if (answerOf(code, { 1: 'listed' } as const) === 'unverified') return 'unverified';
      const items: ListRow[] = [];
      for (let i = 0; i < flat.length; i += 6) {
        const [values, companies] = JSON.parse(flat[i + 1] as string) as [string[], string[] | Record<string, never>];
        // cjson writes an empty Lua table as {}
        const tags = Array.isArray(companies) ? companies : [];
        const doc = readIssue(project, Number(flat[i]), Object.fromEntries(ROW_FIELDS.map((f, k) => [f, values[k]])), tags);
        const matching = Number(flat[i + 5]);
        items.push({
          doc,
          last24h: (flat[i + 2] as (string | null)[]).map((n) => Number(n ?? 0)),
          feedback: Number(flat[i + 3]),
          users: Number(flat[i + 4]),
          matching: matching < 0 ? null : matching,
        });
      }
      return { total, estimated: Number(estimated) === 1, items };
    },

    /** Per release: its issues with an event of it (fr:) and those first seen in it (ff:). */
    async releaseIssues(project: number, releases: string[]): Promise<Map<string, { with_events: number; new: number }>> {
      const base = keys(project).base;
      const pipe = redis.pipeline();
      for (const r of releases) pipe.scard(`${base}fr:${r}`).scard(`${base}ff:${r}`);
      const answers = (await pipe.exec()) ?? [];
      return new Map(releases.map((r, i) => [r, { with_events: Number(answers[2 * i]![1]), new: Number(answers[2 * i + 1]![1]) }]));
    },

    /** The releases the project's events named, each with the time of its first event (the `rf` set). */
    async releasesSeen(project: number): Promise<{ release: string; first: number }[]> {
      const flat = await redis.zrange(`${keys(project).base}rf`, 0, -1, 'WITHSCORES');
      return Array.from({ length: flat.length / 2 }, (_, i) => ({ release: flat[2 * i]!, first: Number(flat[2 * i + 1]) }));
    },

    /** Up to `sample` ids of the issues first seen in a release (ff:) or last regressed in it (fg:), with how many there are. */
    async ofRelease(project: number, release: string, sample: number): Promise<Record<'new' | 'regressed', { total: number; ids: number[] }>> {
      const base = keys(project).base;
      const read = async (set: string) => {
        const [total, [, ids]] = await Promise.all([redis.scard(set), redis.sscan(set, '0', 'COUNT', sample)]);
        return { total, ids: ids.map(Number) };
      };
      const [fresh, regressed] = await Promise.all([read(`${base}ff:${release}`), read(`${base}fg:${release}`)]);
      return { new: fresh, regressed };
    },

    /** The issue's distinct users (from user.id, email, username or the hashed address), as its HyperLogLog counts them. */
    users: (project: number, issue: number): Promise<number> => redis.pfcount(`${keys(project).base}iu:${issue}`),

    /**
     * Where the issue's events come from, the `top` of each with their counts, most first: an error issue's releases,
     * environments and companies; a security issue's actors and addresses.
     */
    async spread(project: number, issue: number, top: number): Promise<Spread> {
      const raw = await redis.hgetall(`${keys(project).base}is:${issue}`);
      const out: Spread = { releases: [], environments: [], companies: [], actors: [], addresses: [], tags: [] };
      const dims = { r: out.releases, e: out.environments, c: out.companies, a: out.actors, i: out.addresses };
      const tags = new Map<string, Count[]>();
      for (const [field, count] of Object.entries(raw)) {
        const spread = readSpreadField(field);
        if (!spread || spread.dim === 'v') continue;
        if (spread.dim !== 't') {
          dims[spread.dim].push({ value: spread.value, count: Number(count) });
          continue;
        }
        const eq = spread.value.indexOf('=');
        const key = spread.value.slice(0, eq);
        tags.set(key, [...(tags.get(key) ?? []), { value: spread.value.slice(eq + 1), count: Number(count) }]);
      }
      const mostFirst = (list: Count[]) => list.sort((a, b) => b.count - a.count || a.value.localeCompare(b.value));
      for (const list of Object.values(dims)) mostFirst(list).splice(top);
      out.tags = [...tags]
        .map(([key, values]) => ({ key, total: values.reduce((n, v) => n + v.count, 0), values: mostFirst(values).slice(0, top) }))
        .sort((a, b) => b.total - a.total || a.key.localeCompare(b.key));
      return out;
    },

    /** The issue's events per hour for the `hours` hours up to now, oldest first. */
    async hourly(project: number, issue: number, hours: number, now: Date): Promise<number[]> {
      const last = hourIndex(now);
      const fields = Array.from({ length: hours }, (_, i) => String(last - hours + 1 + i));
      const counts = await redis.hmget(`${keys(project).base}ih:${issue}`, ...fields);
      return counts.map((n) => Number(n ?? 0));
    },

    /** A page of the issue's user feedback ids, newest first, and how many it has. */
    async feedback(project: number, issue: number, offset: number, limit: number): Promise<{ ids: string[]; total: number }> {
      const key = `${keys(project).base}fb:${issue}`;
      const [ids, total] = await Promise.all([limit > 0 ? redis.zrevrange(key, offset, offset + limit - 1) : [], redis.zcard(key)]);
      return { ids, total };
    },

    /** A page of the issue's event ids, newest first, and how many it has. */
    async events(project: number, issue: number, offset: number, limit: number): Promise<{ ids: string[]; total: number }> {
      const key = `${keys(project).base}ie:${issue}`;
      const [ids, total] = await Promise.all([redis.zrevrange(key, offset, offset + limit - 1), redis.zcard(key)]);
      return { ids, total };
    },

    /**
     * The newest `n` events of these issues together, newest first, with their times (each issue's events are scored
     * by time): a project's newest events are all among those of its `n` issues seen last, and none is older than
     * `since` when the n-th of those was last seen then (each of the n has an event at or after it).
     */
    async newestEvents(project: number, issues: number[], n: number, since = 0): Promise<{ id: string; issue: number; at: number }[]> {
      if (issues.length === 0 || n <= 0) return [];
      const pipe = redis.pipeline();
      for (const issue of issues) pipe.zrevrangebyscore(`${keys(project).base}ie:${issue}`, '+inf', since, 'WITHSCORES', 'LIMIT', 0, n);
      const answers = (await pipe.exec()) ?? [];
      const all = answers.flatMap(([, flat], i) => {
        const pairs = (flat as string[] | null) ?? [];
        return Array.from({ length: pairs.length / 2 }, (_, j) => ({ id: pairs[2 * j]!, issue: issues[i]!, at: Number(pairs[2 * j + 1]) }));
      });
      return all.sort((a, b) => b.at - a.at || a.id.localeCompare(b.id)).slice(0, n);
    },

    /**
     * The event's place among the issue's events (newest first) and the ids of
     * the newer and older one; null when the event is not one of the issue's.
     */
    async neighbours(project: number, issue: number, eventId: string): Promise<{ index: number; newer: string | null; older: string | null } | null> {
      const key = `${keys(project).base}ie:${issue}`;
      const rank = await redis.zrevrank(key, eventId);
      if (rank === null) return null;
      const around = await redis.zrevrange(key, Math.max(0, rank - 1), rank + 1);
      const at = around.indexOf(eventId);
      return { index: rank, newer: at > 0 ? around[at - 1]! : null, older: around[at + 1] ?? null };
    },
  };
}
export type IssueReads = ReturnType<typeof makeIssueReads>;
