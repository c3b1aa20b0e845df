/**
 * Decisions in Redis (issue 24), under the project's hash tag: made and
 * extended by apply-burst-3.lua with the burst's issue, ended by
 * set-issue-status-3.lua (resolve, ignore) and end-decisions-2.lua (lift,
 * expiry), which keep each issue's ended ones (lib/end-decision.lua). Each change is appended to the project's change log (`dlog`, a
 * stream), which the feed reads from a client's cursor, never scanning.
 */
import { primaries, type RedisClient } from '../redis/connect.ts';
import { defineScripts, projectKeys } from './scripts.ts';

export interface Decision {
  id: string;
  kind: 'brute_force' | 'credential_stuffing';
  /** ban or captcha (the project's setting per detector); decisions made before the setting existed are bans */
  type?: 'ban' | 'captcha';
  /** how many times it doubled: decisions for its address within the 24 hours before it was made */
  escalation?: number;
  actor: string | null;
  ip: string | null;
  issue_id: string;
  /** ms */
  created_at: number;
  until: number;
  /** ms: when a later burst last extended it, and how many times one did */
  extended_at?: number;
  extensions?: number;
  /** its member of the `dw` set (apply-burst-3.lua); none on decisions made before that set */
  w?: string;
}

/** A decision that ended (scripts/lib/end-decision.lua): how, and when (ms). */
export interface EndedDecision extends Decision {
  ended: 'lifted' | 'expired' | 'resolved' | 'ignored';
  ended_at: number;
}

/**
 * Every key of a project's decisions (apply-burst-3.lua, end-decisions-2.lua): the decisions (`dc:`), those in force
 * (`da`, `dw`), each issue's active one, history and last lift (`di:`, `dh:`, `dlift:`), each address' recent ones
 * (`dip:`), the counter and the change log. A rebuild of the issue state leaves them; a backup keeps them.
 */
const DECISION_KEYS = /^(?:da|dw|dseq|dlog|(?:dc|di|dh|dlift|dip):.+)$/;

/** Every decision key of every project, in one pass over the keys (each primary of a cluster): its project and its name under the project. */
export async function* decisionKeys(redis: RedisClient, prefix: string): AsyncGenerator<{ key: string; project: number; name: string }> {
  const tagged = /^(.*):\{p:(\d+)\}:(.*)$/;
  const base = projectKeys(prefix, 0).base.replace(/\{p:0\}:$/, '');
  for (const node of primaries(redis)) {
    for await (const found of node.scanStream({ match: `${base}{p:*}:d*`, count: 1000 })) {
      for (const key of found as string[]) {
        const m = tagged.exec(key);
        if (m && `${m[1]}:` === base && DECISION_KEYS.test(m[3]!)) yield { key, project: Number(m[2]), name: m[3]! };
      }
    }
  }
}

/** A cursor: the id of a change log entry (`<ms>-<seq>`). */
export const CURSOR = /^\d{1,20}-\d{1,20}$/;
/** How long a bouncer's cursor is kept after its last pull. */
const BOUNCER_CURSOR_MS = 7 * 24 * 3600_000;
/** The most changes one poll reads; a client further behind gets the full list. */
const MOST_CHANGES = 10_000;

/** Stream ids compared as (ms, seq). */
function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bm, bs] = b.split('-').map(BigInt) as [bigint, bigint];
  return am === bm ? (as === bs ? 0 : as < bs ? -1 : 1) : am < bm ? -1 : 1;
}

export function makeDecisionsState(redis: RedisClient, opts: { prefix: string }) {
  const r = defineScripts(redis);
  const keys = (project: number) => {
    const base = projectKeys(opts.prefix, project).base;
    return { base, active: `${base}da`, log: `${base}dlog` };
  };
  /** The decisions named that are in force, read 1,000 a command, the commands sent together. */
  const read = async (project: number, ids: string[]): Promise<Decision[]> => {
    const chunks: Promise<(string | null)[]>[] = [];
    for (let i = 0; i < ids.length; i += 1000) chunks.push(redis.mget(...ids.slice(i, i + 1000).map((id) => `${keys(project).base}dc:${id}`)));
    const out: Decision[] = [];
    for (const found of await Promise.all(chunks)) for (const json of found) if (json) out.push(JSON.parse(json) as Decision);
    return out;
  };

  /** The newest change's id: the cursor of a client that has everything ('0-0' before any change). */
  const head = async (project: number): Promise<string> => {
    const [last] = await redis.xrevrange(keys(project).log, '+', '-', 'COUNT', 1);
    return last?.[0] ?? '0-0';
  };

  return {
    /** Ends the decisions whose time is up, logging each. */
    async expire(project: number, now: Date): Promise<string[]> {
      const k = keys(project);
      const ended: string[] = [];
      for (;;) {
        const ids = await r.endDecisions(k.active, k.log, k.base, now.getTime(), 'expired');
        ended.push(...ids);
        if (ids.length < 1000) return ended;
      }
    },
    /** Ends the decisions named (those still active), logging each; the ids ended. */
    async lift(project: number, ids: string[], now: Date): Promise<string[]> {
      const k = keys(project);
      return r.endDecisions(k.active, k.log, k.base, now.getTime(), 'lift', ...ids);
    },
    /** Every active decision, soonest to end first. */
    async active(project: number): Promise<Decision[]> {
      return read(project, await redis.zrange(keys(project).active, 0, -1));
    },
    read,
    /** An issue's decisions: the one in force (if any) and the last 50 that ended, newest first. */
    async ofIssue(project: number, issue: number): Promise<{ active: Decision | null; ended: EndedDecision[] }> {
      const base = keys(project).base;
      const [id, history] = await Promise.all([redis.get(`${base}di:${issue}`), redis.lrange(`${base}dh:${issue}`, 0, -1)]);
      const [active = null] = id ? await read(project, [id]) : [];
      return { active, ended: history.map((json) => JSON.parse(json) as EndedDecision) };
    },
    /**
     * A CrowdSec bouncer's cursor: bouncers send none, so Lookout keeps each one's, for a week after its last pull
     * (a bouncer silent longer starts again from the full list).
     */
    bouncerCursor: {
      get: (project: number, bouncer: string): Promise<string | null> => redis.get(`${keys(project).base}bc:${bouncer}`),
      set: async (project: number, bouncer: string, cursor: string): Promise<void> => {
        await redis.set(`${keys(project).base}bc:${bouncer}`, cursor, 'PX', BOUNCER_CURSOR_MS);
      },
    },
    /**
     * Every active decision and the cursor to go on from. The cursor is read first: a change between the two is
     * sent again at the next poll, never missed.
     */
    async inForce(project: number): Promise<{ cursor: string; decisions: Decision[] }> {
      const cursor = await head(project);
      return { cursor, decisions: await read(project, await redis.zrange(keys(project).active, 0, -1)) };
    },
    /**
     * Every decision in force as a bouncer's list names it (`dw`, apply-burst-3.lua): `<id>|<kind>|<type>|<i or
     * a>|<value>` and its end (ms), with the cursor to go on from (read first, as inForce does); null when the set
     * does not hold every decision in force (some were made before it existed): read them whole then.
     */
    async bouncerList(project: number): Promise<{ cursor: string; members: string[] } | null> {
      const k = keys(project);
      const cursor = await head(project);
      const [[, inForce], [, members]] = (await redis.multi().zcard(k.active).zrange(`${k.base}dw`, 0, -1, 'WITHSCORES').exec())! as [
        [null, number],
        [null, string[]],
      ];
      return members.length === 2 * inForce ? { cursor, members } : null;
    },
    /**
     * The changes after `since`, each decision's last one ('s' set, 'd' ended,
     * with the decision as it was when it ended), and the new cursor; null when the log no longer holds what came after
     * `since` (trimmed, lost with Redis, or a cursor it never gave).
     */
    async changes(project: number, since: string): Promise<{ ops: Map<string, 's' | 'd'>; ended: Map<string, Decision>; cursor: string } | null> {
      const k = keys(project);
      // the log's bounds and what follows the cursor, asked together
      const [info, entries] = await Promise.all([
        redis.call('XINFO', 'STREAM', k.log).catch(() => null) as Promise<unknown[] | null>,
        redis.xrange(k.log, `(${since}`, '+', 'COUNT', MOST_CHANGES + 1),
      ]);
      if (!info) return since === '0-0' ? { ops: new Map(), ended: new Map(), cursor: since } : null;
      const field = (name: string) => String(info[info.indexOf(name) + 1]);
      if (compareIds(since, field('max-deleted-entry-id')) < 0 || compareIds(since, field('last-generated-id')) > 0) return null;
      if (entries.length > MOST_CHANGES) return null;
      const ops = new Map<string, 's' | 'd'>();
      /** each decision ended, as it was when it ended */
      const ended = new Map<string, Decision>();
      for (const [, fields] of entries) {
        const [, op, , id, , stored] = fields as [string, 's' | 'd', string, string, string?, string?];
        ops.set(id, op);
        if (op === 'd' && stored) ended.set(id, JSON.parse(stored) as Decision);
        else ended.delete(id);
      }
      return { ops, ended, cursor: entries.at(-1)?.[0] ?? since };
    },
  };
}
export type DecisionsState = ReturnType<typeof makeDecisionsState>;
