/**
 * The issue list's totals on real Redis against their oracle: a list
 * filtered by one set answers its total from the counts kept per status
 * (xn:<status>, snapshot-issues-3.lua and apply-events-4.lua), never by
 * intersecting. Random streams of events (new releases, environments,
 * companies, levels and titles), status changes and snapshots in between
 * must leave every count equal to the intersection ZINTERCARD gives, and
 * every single-filter list's total equal to it; so must a rebuild. Searches
 * with several terms are checked against a plain reading of the sets, with
 * users on few or most events, so that has:user is counted both through
 * fx:user and through its complement fx:nouser.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPlan, parseSearch, type ListPlan } from '../src/domain/search.ts';
import type { AppliedGroup } from '../src/state/apply-events.ts';
import { makeIssueReads } from '../src/state/issue-reads.ts';
import { eventImpact } from '../src/domain/event-impact.ts';
import { packPayload, type EventDoc } from '../src/store/events.store.ts';
import { eventId, makeProject, startTestContext, type TestContext } from './helpers/context.ts';
import { prng } from './helpers/prng.ts';
import type { RedisClient } from '../src/redis/connect.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => ctx?.close());

const STATUSES = ['unresolved', 'resolved', 'ignored'] as const;

/** A new project with its state verified, and what the tests read it with. */
async function freshProject() {
  const { issuesState, keeper, config } = ctx.runtime;
  const redis = issuesState.redis;
  const project = Number((await makeProject(ctx)).project.id);
  await keeper.verify(project, new Date());
  return { issuesState, keeper, redis, reads: makeIssueReads(redis, { prefix: config.queuePrefix }), project, base: issuesState.keys(project).base };
}

describe('the issue list totals kept per status', () => {
  it.each([1, 2, 3, 4])('stream %i', async (seed) => {
    const rnd = prng(seed);
    const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!;
    // how many events name a user: has:user's set is the smaller one in some streams, its complement in others
    const withUser = [0.1, 0.5, 0.8, 0.97][seed - 1]!;
    const { issuesState, keeper, redis, reads, project, base } = await freshProject();
    const t0 = Date.now() - 3600_000;
    let groupNo = 0;

    const check = async () => {
      const sets = (await redis.keys(`${base}f[recklvt]:*`)).concat(await redis.keys(`${base}tx:*`)).map((k) => k.slice(base.length));
      for (const status of STATUSES) {
        const counts = await redis.hgetall(`${base}xn:${status}`);
        for (const set of new Set([...sets, ...Object.keys(counts)])) {
          const expected = await redis.zintercard(2, `${base}x:${status}:id`, `${base}${set}`);
          expect(Number(counts[set] ?? 0), `${status} ${set}`).toBe(expected);
        }
      }
      // One list per kind of filter, through the script the API calls.
      for (const status of STATUSES) {
        for (const [filter, set] of [['release', 'fr:'], ['environment', 'fe:'], ['company', 'fc:'], ['level', 'fl:']] as const) {
          const named = sets.filter((s) => s.startsWith(set));
          if (named.length === 0) continue;
          const value = pick(named).slice(3);
          const search = parseSearch('');
          search.terms.push({ kind: 'field', field: filter, value, negated: false });
          const { plan } = listPlan(search, { me: null, now: new Date() }, status);
          const page = await reads.list(project, { plan, order: 'last_seen', limit: 5, offset: 0 }, new Date());
          if (page === 'unverified') throw new Error('unverified');
          expect(page.total, `${status} ${filter}=${value}`).toBe(await redis.zintercard(2, `${base}x:${status}:id`, `${base}${set}${value}`));
          expect(page.items.length).toBe(Math.min(5, page.total));
        }
      }
      // Searches that walk, negate and range: total and page as a plain reading of the sets and scores finds them.
      for (let n = 0; n < 12; n++) {
        const status = pick(STATUSES);
        const order = pick(['last_seen', 'first_seen', 'event_count', 'id'] as const);
        const terms = [
          pick(['', `release:${pick(['shop@1', 'shop@2', 'shop@3'])}`, `!release:${pick(['shop@1', 'shop@2'])}`]),
          pick(['', `environment:${pick(['production', 'staging'])}`, '!environment:staging']),
          pick(['', `times-seen:>${Math.floor(rnd() * 6)}`, `times-seen:<${1 + Math.floor(rnd() * 6)}`]),
          pick(['', 'age:-40m', 'age:+20m', 'last-seen:-30m']),
          pick(['', 'level:error', '!level:warning']),
          pick(['', 'has:user', '!has:user']),
        ].filter(Boolean);
        const { plan, unknown } = listPlan(parseSearch(terms.join(' ')), { me: null, now: new Date() }, status);
        expect(unknown).toEqual([]);
        const offset = pick([0, 0, 2]);
        const page = await reads.list(project, { plan, order, limit: 4, offset }, new Date());
        if (page === 'unverified') throw new Error('unverified');
        const expected = await plainReading(redis, base, plan, order);
        expect(page.estimated, 'a total is estimated only past 2,500 issues').toBe(false);
        expect(page.total, `${status} ${order} ${terms.join(' ')}`).toBe(expected.length);
        expect(page.items.map((i) => i.doc._id), `${status} ${order} ${terms.join(' ')}`).toEqual(expected.slice(offset, offset + 4));
      }
    };

    const snapshot = async () => {
      const snap = await issuesState.snapshot(project);
      await ctx.runtime.stores.issues.writeFlushed(project, snap.issues.map((i) => i.doc), snap.seq);
      await issuesState.clear(project, snap.issues.map((i) => ({ id: i.doc._id, version: i.version })));
    };

    for (let round = 0; round < 12; round++) {
      const errors = [];
      for (let i = 0, n = 1 + Math.floor(rnd() * 20); i < n; i++) {
        const kind = Math.floor(rnd() * 12);
        const title = pick([`K${kind}Error: boom`, `K${kind}Error: crashed in ${pick(['cart', 'checkout', 'login'])}`]);
        errors.push({ kind, title, user: rnd() < withUser ? { id: `u${Math.floor(rnd() * 5)}` } : undefined, release: pick(['shop@1', 'shop@2', 'shop@3', '']), environment: pick(['production', 'staging', '']), company: pick(['acme', 'globex', 'initech', '']), level: pick(['error', 'warning', 'fatal']) });
      }
      const ids = await issuesState.issueIds(project, errors.map((e) => `fp-${e.kind}`));
      const group: AppliedGroup = {
        id: `g-${seed}-${groupNo++}`,
        receivedAt: new Date(),
        attempts: [],
        errors: errors.map((e, i) => ({
          event: `${project}:${eventId()}`,
          issue: ids.get(`fp-${e.kind}`)!,
          issue_kind: 'error' as const,
          at: new Date(t0 + round * 60_000 + i * 1000),
          release: e.release || null,
          environment: e.environment || null,
          company: e.company || null,
          level: e.level,
          title: e.title,
          culprit: `app.k${e.kind}`,
          exception_type: `K${e.kind}Error`,
          fingerprint: `fp-${e.kind}`,
          user: eventImpact({ user: e.user }).user,
        })),
      };
      // Stored as the API stores them, so that the rebuild at the end recounts them.
      const docs: EventDoc[] = group.errors.map((e) => ({
        _id: e.event, project_id: project, event_id: e.event.split(':')[1]!, batch: group.id, kind: 'error', security_kind: null, actor: null, ip: null,
        group_key: null, fingerprint: e.fingerprint, release: e.release, environment: e.environment, company: e.company, at: e.at, received_at: group.receivedAt,
        payload: packPayload(!e.user ? {} : { user: { id: e.user.split('\n').find((k) => k.startsWith('i:'))!.slice(2) } }),
      }));
      await ctx.runtime.stores.events.collection.insertMany(docs);
      expect((await issuesState.apply(project, [group])).code).not.toBe('unverified');
      // Now and then a snapshot between the events and a status change, so both orders happen.
      if (rnd() < 0.5) await snapshot();
      for (const id of ids.values()) if (rnd() < 0.3) await issuesState.setStatus(project, id, pick(STATUSES), new Date());
      await snapshot();
      await check();
    }

    // A rebuild from MongoDB gives the same counts.
    const before = await Promise.all(STATUSES.map((s) => redis.hgetall(`${base}xn:${s}`)));
    await keeper.rebuild(project, new Date());
    await snapshot();
    expect(await Promise.all(STATUSES.map((s) => redis.hgetall(`${base}xn:${s}`)))).toEqual(before);
    await check();
  });
});

describe('a search only a walk counts, its sources over 2,500 issues', () => {
  it('answers the exact page with an estimated total, flagged as such', async () => {
    const { issuesState, redis, reads, project, base } = await freshProject();
    // 8,000 issues first seen one a tenth of a second apart over the last 800 s, issue k with k % 3 + 1 events
    const t0 = Date.now() - 800_000;
    const ISSUES = 8000;
    for (let from = 0; from < ISSUES; from += 1000) {
      const kinds = Array.from({ length: 1000 }, (_, i) => from + i);
      const ids = await issuesState.issueIds(project, kinds.map((k) => `fp-${k}`));
      const errors = kinds.flatMap((k) =>
        Array.from({ length: (k % 3) + 1 }, (_, n) => ({
          event: `${project}:${eventId()}`, issue: ids.get(`fp-${k}`)!, issue_kind: 'error' as const, at: new Date(t0 + k * 100 + n),
          release: null, environment: null, company: null, level: 'error', title: `K${k}Error: boom`, culprit: 'app', exception_type: `K${k}Error`, fingerprint: `fp-${k}`,
        })),
      );
      expect((await issuesState.apply(project, [{ id: `walk-${from}`, receivedAt: new Date(), attempts: [], errors }])).code).not.toBe('unverified');
    }
    let cursor = '0';
    do cursor = (await issuesState.snapshot(project, { cursor })).cursor;
    while (cursor !== '0');

    const now = new Date();
    // each range holds more than 2,500 issues (5,333 and 7,200): nothing but a walk counts their match
    const { plan } = listPlan(parseSearch('times-seen:<3 age:-12m'), { me: null, now });
    const expected = await plainReading(redis, base, plan, 'last_seen');
    expect(expected.length).toBeGreaterThan(1000);
    for (const offset of [0, 100]) {
      const page = await reads.list(project, { plan, order: 'last_seen', limit: 100, offset }, now);
      if (page === 'unverified') throw new Error('unverified');
      expect(page.items.map((i) => i.doc._id)).toEqual(expected.slice(offset, offset + 100));
      expect(page.estimated).toBe(true);
      // counted over the 2,500 issues seen last and scaled to 8,000: the newest are the likelier to be new
      expect(page.total).toBeGreaterThanOrEqual(expected.length * 0.8);
      expect(page.total).toBeLessThanOrEqual(expected.length * 1.5);
    }
    // a search counted from the sets' counts stays exact at any size
    const exact = await reads.list(project, { plan: listPlan(parseSearch('level:error'), { me: null, now }).plan, order: 'last_seen', limit: 10, offset: 0 }, now);
    expect(exact !== 'unverified' && [exact.total, exact.estimated]).toEqual([ISSUES, false]);
  }, 60_000);
});

/** The plan read plainly: every issue of the status, each filter checked, in the order's scores (ties by id, as Redis orders them). */
async function plainReading(redis: RedisClient, base: string, plan: ListPlan, order: 'last_seen' | 'first_seen' | 'event_count' | 'id'): Promise<number[]> {
  const zset = { last_seen: 'last', first_seen: 'first', event_count: 'count', id: 'id' }[order];
  const scores = async (z: string) => {
    const flat = await redis.zrange(`${base}x:${plan.status}:${z}`, 0, -1, 'WITHSCORES');
    return new Map(Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i]!, Number(flat[2 * i + 1])]));
  };
  const ordered = await scores(zset);
  const ranges = await Promise.all(plan.ranges.map(async (r) => ({ ...r, scores: await scores(r.on) })));
  const members = async (set: string) => new Set(await redis.smembers(`${base}${set}`));
  const ins = await Promise.all(plan.sets.map((s) => members(s.set)));
  const outs = await Promise.all(plan.not.map((s) => members(s.set)));
  const kept = [...ordered.keys()].filter(
    (id) => ins.every((s) => s.has(id)) && outs.every((s) => !s.has(id)) && ranges.every((r) => r.scores.get(id)! >= r.min && r.scores.get(id)! <= r.max),
  );
  const desc = order !== 'id';
  kept.sort((a, b) => (ordered.get(a)! - ordered.get(b)! || (a < b ? -1 : a > b ? 1 : 0)) * (desc ? -1 : 1));
  return kept.map(Number);
}
