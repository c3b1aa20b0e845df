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
import { filterSet, readSpreadField } from '../domain/client-keys.ts';
import type { IssueDoc } from '../store/issues.store.ts';
import { hourIndex, readIssue } from './issue-hash.ts';
import { answerOf, defineScripts, projectKeys } from './scripts.ts';
import type { IssueListQuery } from '../validation/schema-types.ts';

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
];

export const ISSUE_ORDERS = ['last_seen', 'first_seen', 'event_count', 'id'] as const;
export type IssueOrder = (typeof ISSUE_ORDERS)[number];
const ORDER_KEY: Record<IssueOrder, { zset: string; desc: boolean }> = {
  last_seen: { zset: 'last', desc: true },
  first_seen: { zset: 'first', desc: true },
  event_count: { zset: 'count', desc: true },
  id: { zset: 'id', desc: false },
};

/** The filters, paging and order of an issue list, as schemas/issue-list-query.json reads them. */
export type { IssueListQuery };

/**
 * The words of a search, split as snapshot-issues-3.lua splits titles and
 * culprits: at ASCII spaces and punctuation, ASCII letters lower-cased,
 * one-character words left out. An issue matches when its title or culprit
 * holds every word, whole or as a camelCase part (`beta` finds `BetaError`).
 */
export function searchWords(text: string): string[] {
  const lower = text.replace(/[A-Z]+/g, (s) => s.toLowerCase());
  return [...new Set(lower.split(/[ \t\n\v\f\r!-/:-@[-`{-~]+/).filter((w) => w.length > 1))];
}

export function makeIssueReads(redis: RedisClient, opts: { prefix: string }) {
  const r = defineScripts(redis);
  const keys = (project: number) => projectKeys(opts.prefix, project);

  return {
    /** One page of issues, or 'unverified' when the project's state must be verified first. */
    async list(
      project: number,
      q: IssueListQuery,
      now: Date,
    ): Promise<'unverified' | { total: number; items: { doc: IssueDoc; last24h: number[]; feedback: number }[] }> {
      const k = keys(project);
      const order = ORDER_KEY[q.order];
      const filters = [
        q.kind && filterSet('fk', q.kind),
        q.release && filterSet('fr', q.release),
        q.environment && filterSet('fe', q.environment),
        q.level && filterSet('fl', q.level),
        q.company && filterSet('fc', q.company),
        ...searchWords(q.query ?? '').map((w) => filterSet('tx', w)),
      ].filter((f): f is string => Boolean(f));
      const [code, total, ...flat] = await r.listIssues(
        k.epoch,
        `${k.base}x:${q.status}:${order.zset}`,
        `${k.base}xn:${q.status}`,
        k.base,
        order.desc ? 'desc' : 'asc',
        q.offset,
        q.limit,
        hourIndex(now),
        ...filters,
      );
      if (answerOf(code, { 1: 'listed' } as const) === 'unverified') return 'unverified';
      const items: { doc: IssueDoc; last24h: number[]; feedback: number }[] = [];
      for (let i = 0; i < flat.length; i += 4) {
        const [values, companies] = JSON.parse(flat[i + 1] as string) as [string[], string[] | Record<string, never>];
        // cjson writes an empty Lua table as {}
        const tags = Array.isArray(companies) ? companies : [];
        const doc = readIssue(project, Number(flat[i]), Object.fromEntries(ROW_FIELDS.map((f, k) => [f, values[k]])), tags);
        items.push({ doc, last24h: (flat[i + 2] as (string | null)[]).map((n) => Number(n ?? 0)), feedback: Number(flat[i + 3]) });
      }
      return { total, items };
    },

    /**
     * Where the issue's events come from, the `top` of each with their counts, most first: an error issue's releases,
     * environments and companies; a security issue's actors and addresses.
     */
    async spread(project: number, issue: number, top: number): Promise<Record<'releases' | 'environments' | 'companies' | 'actors' | 'addresses', { value: string; count: number }[]>> {
      const raw = await redis.hgetall(`${keys(project).base}is:${issue}`);
      const out = {
        releases: [] as { value: string; count: number }[],
        environments: [] as { value: string; count: number }[],
        companies: [] as { value: string; count: number }[],
        actors: [] as { value: string; count: number }[],
        addresses: [] as { value: string; count: number }[],
      };
      const dims = { r: out.releases, e: out.environments, c: out.companies, a: out.actors, i: out.addresses };
      for (const [field, count] of Object.entries(raw)) {
        const spread = readSpreadField(field);
        if (spread) dims[spread.dim].push({ value: spread.value, count: Number(count) });
      }
      for (const list of Object.values(out)) list.sort((a, b) => b.count - a.count || a.value.localeCompare(b.value)).splice(top);
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
