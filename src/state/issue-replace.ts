/**
 * Replacing a project's issue state from MongoDB (src/state/rebuild.ts calls it): what apply-events-4.lua keeps,
 * written back for many events at once.
 */
import type { RedisClient } from '../redis/connect.ts';
import { eventSpread, filterSetOfSpread } from '../domain/client-keys.ts';
import type { IssueDoc } from '../store/issues.store.ts';
import { attemptSets, BURST_SPAN_MS, type AttemptEntry } from './bursts.state.ts';
import { burstSpan, HOURS_KEPT, hourIndex, writeIssue } from './issue-hash.ts';
import type { PendingFlush } from './pending-flush.ts';
import { dropProjectKeys, projectKeys } from './scripts.ts';

/** The keys under a project's prefix that hold issue state (apply-events-4.lua, snapshot-issues-3.lua); the notification keys (src/notify/notify.state.ts) outlive a rebuild. */
const ISSUE_KEY_PATTERNS = [
  'i:*',
  'ic:*',
  'ie:*',
  'is:*',
  'ih:*',
  'im:*',
  'fr:*',
  'fe:*',
  'fc:*',
  'fl:*',
  'fk:*',
  'tx:*',
  'x:*',
  'xn:*',
  'r:*',
  'ag:*',
  'aip:*',
  'a64:*',
  'dt:*',
  'bx:*',
  'fb:*',
  'fbw:*',
  'iu:*',
  'fv:*',
  'ft:*',
  'fu:*',
  'fx:*',
  'fa:*',
  'ff:*',
  'fg:*',
] as const;

/** An error event counted in its issue, as a rebuild restores it. */
export interface CountedEvent {
  issue: number;
  event_id: string;
  at: Date;
  release: string | null;
  environment: string | null;
  company: string | null;
  /** its user's keys and tags (src/domain/event-impact.ts) */
  user: string;
  tags: string[];
}

export function makeIssueReplace(redis: RedisClient, opts: { prefix: string; pending: PendingFlush }) {
  const keys = (project: number) => projectKeys(opts.prefix, project);
  const { pending } = opts;
  return {
    /**
     * Replaces the project's issue state (src/state/rebuild.ts), in three
     * steps so that the stored events can be streamed through: `begin` drops
     * what the project holds; `events` and `attempts` add its counted events
     * (their list, spread and hourly counts) and the sign-in attempts of the
     * look-back, chunk by chunk; `finish` writes each issue as given with its
     * fingerprint, the spread of its events retention deleted, the groups to
     * count as applied and the change counter, and marks every issue changed,
     * so the flusher writes it and the list indexes take it in. Call with the
     * project's epoch deleted.
     */
    async beginReplace(project: number): Promise<void> {
      const k = keys(project);
      await dropProjectKeys(redis, k.base, [...ISSUE_KEY_PATTERNS], [`${k.base}fp`, `${k.base}rf`, k.eseq, k.eapplied, k.edirty]);
    },
    replaceEvents: (project: number, events: CountedEvent[]) => replaceEvents(redis, keys(project).base, events),
    async replaceAttempts(project: number, attempts: AttemptEntry[]): Promise<void> {
      const k = keys(project);
      const pipe = redis.pipeline();
      for (const a of attempts) for (const [set, member] of attemptSets(a)) pipe.zadd(`${k.base}${set}`, a.at.getTime(), member);
      await pipe.exec();
    },
    async finishReplace(
      project: number,
      issues: IssueDoc[],
      /** per issue, the spread of its events retention deleted (`r:<release>` → count, …) */
      expired: Map<number, Map<string, number>>,
      applied: { id: string; at: Date }[],
      eseq: number,
    ): Promise<void> {
      const k = keys(project);
      const pipe = redis.pipeline();
      for (const [issue, spread] of expired) {
        for (const [field, n] of spread) {
          pipe.hincrby(`${k.base}is:${issue}`, field, n);
          pipe.sadd(`${k.base}${filterSetOfSpread(field)}`, String(issue));
        }
      }
      for (const doc of issues) {
        pipe.hset(`${k.base}i:${doc._id}`, writeIssue(doc));
        const span = burstSpan(doc);
        if (span) pipe.hset(`${k.base}bx:${span.index}`, String(doc._id), JSON.stringify(span.span)).pexpire(`${k.base}bx:${span.index}`, BURST_SPAN_MS);
        if (doc.companies.length > 0) pipe.sadd(`${k.base}ic:${doc._id}`, ...doc.companies);
        pipe.hset(`${k.base}fp`, doc.fingerprint, String(doc._id));
        pipe.hset(k.edirty, String(doc._id), String(eseq));
      }
      for (const b of applied) pipe.zadd(k.eapplied, b.at.getTime(), b.id);
      pipe.set(k.eseq, String(eseq));
      await pipe.exec();
      await pending.markDirty(project);
    },
  };
}

/** What apply-events-4.lua keeps per event (ie:, is:, iu:, ih:, rf and the filter sets), written for many events at once. */
async function replaceEvents(redis: RedisClient, base: string, events: CountedEvent[]): Promise<void> {
  const oldestHour = hourIndex(new Date()) - HOURS_KEPT;
  for (let i = 0; i < events.length; i += 2000) {
    const pipe = redis.pipeline();
    for (const e of events.slice(i, i + 2000)) {
      pipe.zadd(`${base}ie:${e.issue}`, e.at.getTime(), e.event_id);
      if (e.release) pipe.zadd(`${base}rf`, 'LT', e.at.getTime(), e.release);
      for (const field of eventSpread(e)) {
        pipe.hincrby(`${base}is:${e.issue}`, field, 1);
        pipe.sadd(`${base}${filterSetOfSpread(field)}`, String(e.issue));
      }
      for (const part of e.user ? e.user.split('\n') : []) {
        if (part.startsWith('k:')) pipe.pfadd(`${base}iu:${e.issue}`, part.slice(2));
        else pipe.sadd(`${base}fu:${part}`, String(e.issue));
      }
      if (e.user) pipe.sadd(`${base}fx:user`, String(e.issue));
      const hour = hourIndex(e.at);
      if (hour > oldestHour) pipe.hincrby(`${base}ih:${e.issue}`, String(hour), 1);
    }
    for (const [err] of (await pipe.exec()) ?? []) if (err) throw err;
  }
}
