/**
 * The hot state of issues in Redis: the fingerprint → issue map, each
 * issue's counters and status, its events, spread and hourly counts. It
 * changes only through the scripts in ./scripts, one call per project per
 * batch; the flusher copies changed issues to MongoDB, which serves the
 * reads. The burst detectors' attempts and folds are ./bursts.state.ts'.
 */
import type { RedisClient } from '../redis/connect.ts';
import { filterSetOfSpread, spreadField, SPREAD_DIMS } from '../domain/client-keys.ts';
import type { IssueStatus } from '../domain/issue-status.ts';
import { groupTime } from '../util/group-commit.ts';
import type { IssueDoc } from '../store/issues.store.ts';
import { takeLease, type Lease } from './lease.ts';
import { makePendingFlush } from './pending-flush.ts';
import { makeRepackList, type RepackList } from './repack-list.ts';
import { answerOf, APPLY_CODES, defineScripts, dropProjectKeys, projectKeys, type ApplyCode } from './scripts.ts';
import { APPLIED_MEMORY_MS } from './sessions.state.ts';
import { burstSpan, fromPairs, HOURS_KEPT, hourIndex, readIssue, writeIssue } from './issue-hash.ts';
import { attemptSets, BURST_SPAN_MS, DETECTION_LOOKBACK_MS, DETECTION_MAX_ATTEMPTS, type AttemptEntry } from './bursts.state.ts';

/** An error event (or a CSP violation) as the apply script takes it. */
export interface ErrorEntry {
  event: string;
  issue: number;
  /** the kind of its issue: `security` for a CSP violation's (src/domain/csp.ts) */
  issue_kind: 'error' | 'security';
  at: Date;
  release: string | null;
  level: string;
  title: string;
  culprit: string;
  exception_type: string | null;
  company: string | null;
  environment: string | null;
  fingerprint: string;
}

/** User feedback to link to the issue of its event: the event's fingerprint when the event is stored. */
export interface FeedbackLink {
  feedback_id: string;
  event_id: string | null;
  fingerprint: string | null;
  at: Date;
}
/** How long feedback waits for an event that has not arrived: an SDK sends the event first, or within moments. */
const FEEDBACK_WAIT_MS = 7 * 24 * 3600_000;

/** One group of events, as the apply script takes it for one project. */
export interface AppliedGroup {
  id: string;
  receivedAt: Date;
  errors: ErrorEntry[];
  attempts: AttemptEntry[];
  /** whether the group stored sign-in attempts of the project (of any kind): the repacker rewrites them later */
  packed?: boolean;
}

export function makeIssuesState(redis: RedisClient, opts: { prefix: string }) {
  const r = defineScripts(redis);
  /** Issue ids come from one counter for all projects (a plain command: it is not in any project's slot). */
  const issueSeq = `${opts.prefix}:issues:seq`;
  const keys = (project: number) => projectKeys(opts.prefix, project);
  const pending = makePendingFlush(redis, opts.prefix, 'events');
  /** The issue of each fingerprint that has one (nothing is numbered). */
  const knownIssueIds = async (project: number, fingerprints: string[]): Promise<Map<string, number>> => {
    const unique = [...new Set(fingerprints)];
    const known = unique.length === 0 ? [] : await redis.hmget(`${keys(project).base}fp`, ...unique);
    return new Map(unique.flatMap((f, i) => (known[i] ? [[f, Number(known[i])] as const] : [])));
  };

  return {
    redis,
    keys,
    pending,

    knownIssueIds,
    /** Takes deleted events off their issues' event lists (retention); the issues' counters stay. */
    async forgetEvents(project: number, byIssue: { issue: number; events: string[] }[]): Promise<void> {
      const pipe = redis.pipeline();
      for (const { issue, events } of byIssue) if (events.length > 0) pipe.zrem(`${keys(project).base}ie:${issue}`, ...events);
      await pipe.exec();
    },

    /** The issue of each fingerprint, new ones numbered from the shared counter (first writer wins). */
    async issueIds(project: number, fingerprints: string[]): Promise<Map<string, number>> {
      const out = await knownIssueIds(project, fingerprints);
      const fp = `${keys(project).base}fp`;
      for (const f of new Set(fingerprints)) {
        if (out.has(f)) continue;
        const id = await redis.incr(issueSeq);
        // Two workers may number one fingerprint at once: the first mapping stays, the other id is unused.
        out.set(f, (await redis.hsetnx(fp, f, String(id))) === 1 ? id : Number(await redis.hget(fp, f)));
      }
      return out;
    },
    /** After a Redis restart: the counter never goes below the highest issue id MongoDB holds. */
    async raiseIssueSeq(atLeast: number): Promise<void> {
      await r.raiseCounter(issueSeq, atLeast);
    },

    /** Applies the groups' events of one project in one script call; a group applied before is skipped. */
    async apply(project: number, groups: AppliedGroup[], notify = ''): Promise<ApplyCode> {
      const k = keys(project);
      const entries = groups.map((g) => ({
        id: g.id,
        ...repackListing(g),
        at: g.receivedAt.getTime(),
        e: g.errors.map((e) => [e.event, e.issue, String(e.at.getTime()), e.release ?? '', e.level, e.title, e.exception_type ?? '', e.company ?? '', e.fingerprint, e.culprit, e.environment ?? '', e.issue_kind]),
        a: g.attempts.map((a) => [String(a.at.getTime()), ...attemptSets(a).flat()]),
      }));
      const [code] = await r.applyEvents(k.epoch, k.eseq, k.eapplied, k.edirty, k.base, APPLIED_MEMORY_MS, `${DETECTION_LOOKBACK_MS}:${DETECTION_MAX_ATTEMPTS}`, JSON.stringify(entries), notify);
      return answerOf(code, APPLY_CODES);
    },

    /** The groups (src/store/attempts.store.ts) of the project the repacker has yet to rewrite. */
    repackList: (project: number): RepackList => makeRepackList(redis, `${keys(project).base}rp`),
    /**
     * The repacker's lease, for up to `ms`: one run at a time across the workers, since a run that spreads its work
     * outlasts the interval it is scheduled at. Null: another run holds it.
     */
    takeRepackLease: (ms: number): Promise<Lease | null> => takeLease(redis, `${opts.prefix}:repack:lease`, ms),

    /**
     * Links user feedback to the issue of its event (link-feedback-1.lua), or leaves it waiting for the event:
     * the issue id, 'waiting', or 'unverified' (the state is rebuilt from MongoDB, feedback with it).
     */
    async linkFeedback(project: number, link: FeedbackLink): Promise<number | 'waiting' | 'unverified'> {
      const k = keys(project);
      const code = await r.linkFeedback(k.epoch, k.base, link.fingerprint ?? '', link.event_id ?? '', link.feedback_id, link.at.getTime(), FEEDBACK_WAIT_MS);
      return code > 0 ? code : answerOf(code, { 0: 'waiting' } as const);
    },
    /** Takes feedback retention deleted off its issue. */
    async forgetFeedback(project: number, issue: number, ids: string[]): Promise<void> {
      await redis.zrem(`${keys(project).base}fb:${issue}`, ...ids);
    },
    /** A rebuild's links of feedback to issues, and of feedback still waiting for its event (see linkFeedback). */
    async replaceFeedback(project: number, links: { issue: number | null; event_id: string | null; feedback_id: string; at: Date }[]): Promise<void> {
      const base = keys(project).base;
      const pipe = redis.pipeline();
      for (const l of links) {
        if (l.issue !== null) pipe.zadd(`${base}fb:${l.issue}`, l.at.getTime(), l.feedback_id);
        else if (l.event_id) pipe.sadd(`${base}fbw:${l.event_id}`, `${l.at.getTime()}:${l.feedback_id}`).pexpire(`${base}fbw:${l.event_id}`, FEEDBACK_WAIT_MS);
      }
      await pipe.exec();
    },

    async setStatus(project: number, issue: number, status: IssueStatus, now: Date): Promise<'set' | 'not_found' | 'unverified'> {
      const k = keys(project);
      const code = await r.setIssueStatus(k.epoch, k.eseq, k.edirty, k.base, issue, status, now.getTime());
      return answerOf(code, { 1: 'set', 0: 'not_found' } as const);
    },

    /** Changed issues (or the ones named) as documents, with the project's event change counter, read atomically. */
    async snapshot(project: number, ids: number[] = []): Promise<{ verified: boolean; seq: number; issues: { doc: IssueDoc; version: string }[] }> {
      const k = keys(project);
      const [verified, seq, ...rows] = await r.snapshotIssues(k.epoch, k.eseq, k.edirty, k.base, ...ids.map(String));
      const issues = rows.filter(([, , fields]) => fields.length > 0).map(([id, version, fields, companies]) => ({ doc: readIssue(project, Number(id), fromPairs(fields), companies), version }));
      return { verified: verified === 1, seq, issues };
    },
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
      await dropProjectKeys(redis, k.base, [...ISSUE_KEY_PATTERNS], [`${k.base}fp`, k.eseq, k.eapplied, k.edirty]);
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
    /** Issues as their hashes hold them now (a notification's, before the flusher copies them); a missing one is left out. */
    async issues(project: number, ids: number[]): Promise<Map<number, IssueDoc>> {
      const pipe = redis.pipeline();
      for (const id of ids) pipe.hgetall(`${keys(project).base}i:${id}`).smembers(`${keys(project).base}ic:${id}`);
      const answers = (await pipe.exec()) ?? [];
      const out = new Map<number, IssueDoc>();
      for (const [i, id] of ids.entries()) {
        const h = answers[2 * i]![1] as Record<string, string>;
        if (h.kind) out.set(id, readIssue(project, id, h, answers[2 * i + 1]![1] as string[]));
      }
      return out;
    },
    async clear(project: number, written: { id: number; version: string }[]): Promise<void> {
      if (written.length > 0) await r.clearDirty(keys(project).edirty, ...written.flatMap((w) => [String(w.id), w.version]));
    },

  };
}
export type IssuesState = ReturnType<typeof makeIssuesState>;

/** The keys under a project's prefix that hold issue state (apply-events-4.lua, snapshot-issues-3.lua); the notification keys (src/state/notify.state.ts) outlive a rebuild. */
const ISSUE_KEY_PATTERNS = ['i:*', 'ic:*', 'ie:*', 'is:*', 'ih:*', 'im:*', 'fr:*', 'fe:*', 'fc:*', 'fl:*', 'fk:*', 'tx:*', 'x:*', 'xn:*', 'r:*', 'ag:*', 'aip:*', 'dt:*', 'bx:*', 'fb:*', 'fbw:*'] as const;

/** An error event counted in its issue, as a rebuild restores it. */
export interface CountedEvent {
  issue: number;
  event_id: string;
  at: Date;
  release: string | null;
  environment: string | null;
  company: string | null;
}

/** What apply-events-4.lua keeps per event (ie:, is:, ih: and the filter sets), written for many events at once. */
async function replaceEvents(redis: RedisClient, base: string, events: CountedEvent[]): Promise<void> {
  const oldestHour = hourIndex(new Date()) - HOURS_KEPT;
  for (let i = 0; i < events.length; i += 2000) {
    const pipe = redis.pipeline();
    for (const e of events.slice(i, i + 2000)) {
      pipe.zadd(`${base}ie:${e.issue}`, e.at.getTime(), e.event_id);
      for (const [dim, value] of [[SPREAD_DIMS.release, e.release], [SPREAD_DIMS.environment, e.environment], [SPREAD_DIMS.company, e.company]] as const) {
        if (!value) continue;
        const field = spreadField(dim, value);
        pipe.hincrby(`${base}is:${e.issue}`, field, 1);
        pipe.sadd(`${base}${filterSetOfSpread(field)}`, String(e.issue));
      }
      const hour = hourIndex(e.at);
      if (hour > oldestHour) pipe.hincrby(`${base}ih:${e.issue}`, String(hour), 1);
    }
    for (const [err] of (await pipe.exec()) ?? []) if (err) throw err;
  }
}

/** A group that stored sign-in attempts is listed for the repacker by its id's time (`p`). */
function repackListing(g: AppliedGroup): { p?: number } {
  const made = g.packed ? groupTime(g.id) : NaN;
  return Number.isFinite(made) ? { p: made } : {};
}
